// Unknown deprecations fleet-wide (#/unknown?label&cursor): kernel messages that
// look like deprecations but that no catalog entry matched, grouped by
// normalised text with their hosts, counts, times and kernels, so that a
// new kernel's new deprecation is noticed the day a host reports it.
import { api, query } from '../api.js';
import { banner, h, setMain } from '../dom.js';
import { fmtAgo, fmtTime } from '../format.js';
import { updateParams } from '../router.js';
import { featureLink } from '../session.js';
import { table } from '../table.js';
import { labelFilter } from './health.js';

const COLUMNS = [
	{ key: 'text', label: 'Message (digits as #)', text: true },
	{ key: 'hosts', label: 'Hosts', num: true },
	{ key: 'count', label: 'Times', num: true },
	{ key: 'kernels', label: 'Kernels', text: true,
		value: (x) => (x.kernels || []).map((k) => (k.kernel || '?') + ' (' + k.hosts + ')').join(', ') },
	{ key: 'first_seen', label: 'First seen', num: true, render: (x) => fmtTime(x.first_seen) },
	{ key: 'last_seen', label: 'Last report', num: true, render: (x) => fmtAgo(x.last_seen) },
	{ key: 'matched_feature', label: 'Now matched to', text: true,
		render: (x) => (x.matched_feature ? featureLink(x.matched_feature) : (x.feature_id ? 'unknown id ' + x.feature_id : '–')),
		value: (x) => x.matched_feature || x.feature_id || '' },
];

export async function pageUnknown(view) {
	const cursor = view.params.get('cursor');
	setMain(h('h1', {}, 'Unknown deprecations'), banner('loading', 'Loading…'));
	const r = await api(query('/api/v1/unknown', { cursor, label: view.params.get('label') }));
	if (!view.current())
		return;
	const pager = h('div', { class: 'pager' });
	if (r.next_cursor)
		pager.append(h('button', { type: 'button', onclick: () => updateParams({ cursor: r.next_cursor }) }, 'Next page'));
	if (cursor)
		pager.append(h('button', { type: 'button', class: 'secondary', onclick: () => updateParams({ cursor: '' }) }, 'First page'));
	setMain(h('h1', {}, 'Unknown deprecations'),
		h('p', { class: 'muted' }, 'Kernel messages that read like a deprecation but match no catalog entry, from every host. ' +
			'A new kernel\'s new deprecation appears here first; add it to the catalog to count it as a feature.'),
		labelFilter(view.params),
		table(COLUMNS, r.texts || [], { id: 'unknown', empty: 'No host reported an unrecognised deprecation message.' }),
		pager);
}
