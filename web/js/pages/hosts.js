// The host list (#/hosts?host&kernel&cgroup_mode&feature&label&since&until&cursor):
// filters in the URL, one page of hosts at a time.
import { api, query } from '../api.js';
import { banner, h, hostLink, setMain } from '../dom.js';
import { fmtAgo } from '../format.js';
import { updateParams } from '../router.js';
import { catalogFeatures } from '../session.js';
import { table } from '../table.js';

const FILTERS = ['host', 'kernel', 'cgroup_mode', 'feature', 'label', 'since', 'until', 'cursor', 'limit'];

const COLUMNS = [
	{ key: 'hostname', label: 'Host', text: true, render: (x) => hostLink(x.host_id, x.hostname) },
	{ key: 'kernel', label: 'Kernel', text: true },
	{ key: 'cgroup_mode', label: 'cgroup mode' },
	{ key: 'features', label: 'Features used', num: true, value: (x) => (Array.isArray(x.features) ? x.features.length : x.features) },
	{ key: 'last_seen', label: 'Last report', num: true, render: (x) => fmtAgo(x.last_seen) },
];

function filterForm(params) {
	const fHost = h('input', { id: 'f-host', value: params.get('host') || '', placeholder: 'web-* or prefix' });
	const fKernel = h('input', { id: 'f-kernel', value: params.get('kernel') || '', placeholder: '6.1*' });
	const fMode = h('select', { id: 'f-mode' }, ['', 'v1', 'hybrid', 'v2'].map((m) =>
		h('option', { value: m, selected: (params.get('cgroup_mode') || '') === m }, m || 'any')));
	const fLabel = h('input', { id: 'f-label', value: params.get('label') || '', placeholder: 'team=payments' });
	const fFeature = h('select', { id: 'f-feature' }, h('option', { value: '' }, 'any'),
		catalogFeatures().map((f) => h('option', { value: f.id, selected: params.get('feature') === f.id }, f.title)));
	return h('form', {
		class: 'filters', onsubmit: (ev) => {
			ev.preventDefault();
			updateParams({ host: fHost.value.trim(), kernel: fKernel.value.trim(), cgroup_mode: fMode.value, feature: fFeature.value,
				label: fLabel.value.trim(), cursor: '' });
		},
	}, h('label', {}, 'Hostname', fHost), h('label', {}, 'Kernel', fKernel), h('label', {}, 'cgroup mode', fMode),
	h('label', {}, 'Uses feature', fFeature), h('label', {}, 'Label', fLabel), h('button', { type: 'submit' }, 'Filter'));
}

function pager(params, next) {
	const p = h('div', { class: 'pager' });
	if (next)
		p.append(h('button', { type: 'button', onclick: () => updateParams({ cursor: next }) }, 'Next page'));
	if (params.get('cursor'))
		p.append(h('button', { type: 'button', class: 'secondary', onclick: () => updateParams({ cursor: '' }) }, 'First page'));
	return p;
}

export async function pageHosts(view) {
	const params = view.params;
	setMain(h('h1', {}, 'Hosts'), banner('loading', 'Loading hosts…'));
	const r = await api(query('/api/v1/hosts', Object.fromEntries(FILTERS.map((k) => [k, params.get(k)]))));
	if (!view.current())
		return;
	setMain(h('h1', {}, 'Hosts'), filterForm(params),
		table(COLUMNS, r.hosts || [], { id: 'hosts', empty: 'No host matches these filters.' }),
		pager(params, r.next_cursor));
}
