// Fleet agent health (#/health): the agents whose silence or losses would
// otherwise read as "no usage".
import { api } from '../api.js';
import { banner, h, hostLink, setMain } from '../dom.js';
import { fmtAgo, fmtNum } from '../format.js';
import { table } from '../table.js';

function part(d, key, title, extraCol) {
	const p = d[key] || { count: 0, hosts: [] };
	const cols = [
		{ key: 'hostname', label: 'Host', text: true, render: (x) => hostLink(x.host_id, x.hostname) },
		{ key: 'last_seen', label: 'Last report', num: true, render: (x) => fmtAgo(x.last_seen) },
	];
	if (extraCol)
		cols.push(extraCol);
	return h('section', { id: 'health-' + key }, h('h2', {}, title + ' (' + fmtNum(p.count) + ')'),
		table(cols, p.hosts || [], { id: 'h-' + key, empty: 'None.' }));
}

function probeList(x) {
	return Array.isArray(x.probe_missing) ? x.probe_missing.join(', ') : (x.probe_missing || '');
}

export async function pageHealth(view) {
	setMain(h('h1', {}, 'Agent health'), banner('loading', 'Loading fleet health…'));
	const d = await api('/api/v1/health');
	if (!view.current())
		return;
	setMain(h('h1', {}, 'Agent health'),
		h('p', { class: 'muted' }, 'Missing data must never read as "no usage": these agents are silent, lossy or half-blind.'),
		part(d, 'silent', 'Silent for more than ' + Math.round((d.silent_after || 0) / 3600) + ' h'),
		part(d, 'records_lost', 'Reporting lost kernel log records', { key: 'records_lost', label: 'Records lost', num: true }),
		part(d, 'key_rejected', 'Key rejected'),
		part(d, 'probe_missing', 'Missing BPF probes', { key: 'probe_missing', label: 'Features', text: true, render: probeList }));
}
