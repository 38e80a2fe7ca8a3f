// One host (#/host/<id>): what it runs, the deprecated features it used
// (configured, listened to or only read, and the values written), and
// whether its agent can be trusted to see them (health, probes).
import { api } from '../api.js';
import { banner, h, setMain } from '../dom.js';
import { fmtAgo, fmtNum, fmtTime } from '../format.js';
import { featureLink, featureTitle } from '../session.js';
import { table } from '../table.js';

// The operator's labels, each a link to the hosts that share it.
function labelLinks(labels) {
	const kv = Object.entries(labels || {});
	if (!kv.length)
		return '–';
	return kv.map(([k, v], i) => [i ? ' ' : null,
		h('a', { href: '#/hosts?label=' + encodeURIComponent(k + '=' + v), class: 'label' }, k + '=' + v)]);
}

function infoCard(id, d) {
	return h('div', { class: 'card' }, h('dl', { class: 'kv', id: 'host-info' },
		h('dt', {}, 'Host id'), h('dd', {}, h('code', {}, d.host_id || id)),
		h('dt', {}, 'Kernel'), h('dd', {}, d.kernel || '–'),
		h('dt', {}, 'cgroup mode'), h('dd', {}, d.cgroup_mode || '–'),
		h('dt', {}, 'Agent'), h('dd', {}, (d.agent_version || '?') + ', catalog ' + (d.catalog_version || '?')),
		h('dt', {}, 'Labels'), h('dd', { id: 'host-labels' }, labelLinks(d.labels)),
		h('dt', {}, 'Last report'), h('dd', { id: 'host-last-seen' }, fmtTime(d.last_seen) + ' (' + fmtAgo(d.last_seen) + ')')));
}

const yesNo = (b) => (b ? 'yes' : 'no');

// The reads cell: BPF reads, and whether reading is all the host does
// (monitoring: never counted as using the feature).
function readsText(x) {
	const n = fmtNum(x.reads || 0);
	return x.reads_only ? n + ' (read only)' : n;
}

// The values written on this host, in the server's words (values.classes).
function valueClasses(x) {
	return (x.values && x.values.classes) || [];
}

// One row per feature with evidence on the host: the three kinds of use
// apart (configures, listens, reads), BPF uses and kernel warnings apart,
// and the values written here.
function featuresTable(d) {
	const fid = (x) => x.feature_id || x.id;
	return table([
		{ key: 'feature_id', label: 'Feature', render: (x) => featureLink(fid(x)), value: (x) => featureTitle(fid(x)) },
		{ key: 'configures', label: 'Configures', value: (x) => yesNo(x.configures) },
		{ key: 'listens', label: 'Listens', value: (x) => yesNo(x.listens) },
		{ key: 'reads', label: 'Reads', num: true, render: readsText },
		{ key: 'uses', label: 'Uses (writes and registrations)', num: true },
		{ key: 'warnings', label: 'Kernel warnings', num: true },
		{ key: 'values', label: 'Values written', text: true, value: (x) => valueClasses(x).join('; '),
			render: (x) => (valueClasses(x).length ? h('ul', { class: 'values' }, ...valueClasses(x).map((c) => h('li', {}, c))) : '–') },
		{ key: 'first_used', label: 'First used', num: true, render: (x) => fmtTime(x.first_used) },
		{ key: 'last_used', label: 'Last used', num: true, render: (x) => fmtTime(x.last_used) },
	], d.features || [], { id: 'host-features', empty: 'This host used no deprecated feature.' });
}

// A counter that is bad news when not zero.
function alarm(n) {
	return h('dd', { class: n ? 'error' : '' }, fmtNum(n || 0));
}

function healthCard(hh, missing) {
	const memory = hh.rss_anon_kb ? fmtNum(hh.rss_anon_kb) + ' KiB anonymous, ' + fmtNum(hh.rss_kb) + ' KiB resident' : '–';
	return h('div', { class: 'card' }, h('dl', { class: 'kv', id: 'host-health' },
		h('dt', {}, 'kmsg records lost'), alarm(hh.records_lost),
		h('dt', {}, 'Parse failures'), h('dd', {}, fmtNum(hh.parse_failures || 0)),
		h('dt', {}, 'Map overflows'), alarm(hh.map_overflows),
		h('dt', {}, 'Spool'), h('dd', {}, fmtNum(hh.spool_files || 0) + ' batches, ' + fmtNum(hh.spool_bytes || 0) + ' bytes, ' + fmtNum(hh.spool_dropped || 0) + ' dropped'),
		h('dt', {}, 'Send failures'), h('dd', {}, fmtNum(hh.send_failures || 0) + (hh.last_error ? ' (last: ' + hh.last_error + ')' : '')),
		h('dt', {}, 'Key rejected'), h('dd', { class: hh.key_rejected ? 'error' : '' }, hh.key_rejected ? 'yes' : 'no'),
		h('dt', {}, 'Missing probes'), h('dd', { class: missing.length ? 'error' : '' }, missing.length ? missing.join(', ') : 'none'),
		h('dt', {}, 'Memory'), h('dd', {}, memory)));
}

function probesTable(probes) {
	if (!probes.length)
		return h('p', { class: 'muted' }, 'No BPF probe state reported.');
	return table([
		{ key: 'name', label: 'Probe', text: true },
		{ key: 'state', label: 'State' },
		{ key: 'reason', label: 'Reason', text: true },
	], probes, { id: 'probes' });
}

// Kernel deprecation messages the catalog did not recognise when they came
// in (matched_feature: a newer catalog knows them now).
function unknownSection(unknown) {
	if (!unknown || !unknown.length)
		return null;
	return [h('h2', {}, 'Unrecognised deprecation messages'), table([
		{ key: 'text', label: 'Kernel message (digits as #)', text: true },
		{ key: 'count', label: 'Count', num: true },
		{ key: 'first_time', label: 'First seen', num: true, render: (x) => fmtTime(x.first_time) },
		{ key: 'matched_feature', label: 'Now matches', render: (x) => (x.matched_feature ? featureLink(x.matched_feature) : '–') },
	], unknown, { id: 'unknown' })];
}

export async function pageHost(view) {
	const id = view.args.id;
	setMain(h('h1', {}, 'Host'), banner('loading', 'Loading host…'));
	const d = await api('/api/v1/hosts/' + encodeURIComponent(id));
	if (!view.current())
		return;
	const hh = d.health || {};
	const missing = hh.probe_missing || d.probe_missing || [];
	setMain(h('h1', {}, d.hostname || id), infoCard(id, d),
		h('h2', {}, 'Deprecated features on this host'), featuresTable(d),
		h('h2', {}, 'Agent health'), healthCard(hh, missing),
		probesTable(hh.probes || []),
		unknownSection(d.unknown_deprecations));
}
