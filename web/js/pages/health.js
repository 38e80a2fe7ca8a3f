// Fleet agent health (#/health?label): the agents whose silence or losses
// would otherwise read as "no usage", host ids that cloned machines share,
// and the server certificate's expiry; with label, of the hosts carrying it.
import { api, query } from '../api.js';
import { banner, h, hostLink, setMain } from '../dom.js';
import { fmtAgo, fmtNum } from '../format.js';
import { updateParams } from '../router.js';
import { table } from '../table.js';

// labelFilter(params, opts): the form of a page filtered by one operator
// label (#/PAGE?label=KEY=VALUE); the API refuses a malformed one. opts.id
// names the form and its input apart from another on the same page,
// opts.caption says what the label filters.
export function labelFilter(params, { id = 'label', caption = 'Label' } = {}) {
	const fLabel = h('input', { id: 'f-' + id, value: params.get('label') || '', placeholder: 'team=payments' });
	return h('form', {
		class: 'filters', id: id + '-form', onsubmit: (ev) => {
			ev.preventDefault();
			updateParams({ label: fLabel.value.trim(), cursor: '' });
		},
	}, h('label', {}, caption, fLabel), h('button', { type: 'submit' }, 'Filter'));
}

function part(d, key, title, extraCol, note) {
	const p = d[key] || { count: 0, hosts: [] };
	const cols = [
		{ key: 'hostname', label: 'Host', text: true, render: (x) => hostLink(x.host_id, x.hostname) },
		{ key: 'last_seen', label: 'Last report', num: true, render: (x) => fmtAgo(x.last_seen) },
	];
	if (extraCol)
		cols.push(extraCol);
	return h('section', { id: 'health-' + key }, h('h2', {}, title + ' (' + fmtNum(p.count) + ')'),
		note && p.count ? note : null,
		table(cols, p.hosts || [], { id: 'h-' + key, empty: 'None.' }));
}

function probeList(x) {
	return Array.isArray(x.probe_missing) ? x.probe_missing.join(', ') : (x.probe_missing || '');
}

// Machines cloned from one image share /etc/machine-id, so one host id:
// their reports mix. What to run on each clone (and in the image).
function cloneNote() {
	return h('div', { class: 'note' },
		h('p', {}, 'Several machines report under each of these host ids at the same time: they were cloned ' +
			'from one image and share its /etc/machine-id, from which the agent derives the host id. Their ' +
			'reports mix, so each machine counts for none of them. On every clone, give the machine its own ' +
			'id and enrol it again:'),
		h('pre', {}, 'rm -f /etc/machine-id /var/lib/dbus/machine-id\n' +
			'systemd-machine-id-setup\n' +
			'rm -f /var/lib/twilight-agent/host.key\n' +
			'systemctl restart twilight-agent'),
		h('p', {}, 'In the image itself, leave /etc/machine-id empty (truncate -s 0 /etc/machine-id) and delete ' +
			'/var/lib/twilight-agent/host.key, so that each machine made from it gets an id of its own at ' +
			'first boot. A reboot changes nothing: the id is kept on disk.'));
}

// The server certificate's expiry, when it is near (or past).
function certWarning(c) {
	if (!c || !c.warning)
		return null;
	return banner('error', c.warning);
}

// Agents whose catalog is older or newer than the server's: neither loses
// data (unknown feature ids are kept), but each side names less than it could.
function catalogParts(c) {
	const cat = c || {};
	const v = ' (server catalog version ' + (cat.version ?? '?') + ')';
	return [
		part({ catalog_older: cat.older }, 'catalog_older', 'Agents with an older catalog' + v, null,
			h('p', { class: 'muted' }, 'These agents cannot name features added to the catalog since; upgrade the agent package.')),
		part({ catalog_newer: cat.newer }, 'catalog_newer', 'Agents with a newer catalog' + v, null,
			h('p', { class: 'muted' }, 'These agents report features this server does not know yet; they are kept as unknown feature ids and re-matched when the server is upgraded.')),
	];
}

export async function pageHealth(view) {
	setMain(h('h1', {}, 'Agent health'), banner('loading', 'Loading fleet health…'));
	const d = await api(query('/api/v1/health', { label: view.params.get('label') }));
	if (!view.current())
		return;
	setMain(h('h1', {}, 'Agent health'),
		certWarning(d.certificate), labelFilter(view.params),
		h('p', { class: 'muted' }, 'Missing data must never read as "no usage": these agents are silent, lossy or half-blind.'),
		part(d, 'silent', 'Silent for more than ' + Math.round((d.silent_after || 0) / 3600) + ' h'),
		part(d, 'records_lost', 'Reporting lost kernel log records', { key: 'records_lost', label: 'Records lost', num: true }),
		part(d, 'key_rejected', 'Key rejected'),
		part(d, 'probe_missing', 'Missing BPF probes', { key: 'probe_missing', label: 'Features', text: true, render: probeList }),
		part(d, 'cloned', 'Host ids shared by cloned machines', null, cloneNote()),
		part(d, 'boot_uncovered', 'Boot start not covered by any log source', null,
			h('p', { class: 'muted' }, 'The kernel log of these hosts\' current boot was overwritten before the agent read it, ' +
				'and no journal held its start: a warning printed then is unseen, so "no warning" proves nothing there.')),
		...catalogParts(d.catalog));
}
