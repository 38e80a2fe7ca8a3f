// The overview (#/): fleet figures, what the counts could see (coverage),
// the features in use with their trend, the features in use that no use
// case explains yet, and the catalog features nobody was seen using, each
// "not seen" or "not measured" as the server decides (the summary's
// per-feature "measured", docs/api.md).
import { api } from '../api.js';
import { dayAxis, DAY, lineChart, onAxis } from '../chart.js';
import { banner, h, setMain, statusBadge } from '../dom.js';
import { fmtNum, fmtShare, fmtTime } from '../format.js';
import { catalogVersion, feature, featureLink } from '../session.js';
import { table } from '../table.js';

const COLUMNS = [
	{ key: 'title', label: 'Feature', render: (r) => featureLink(r.id) },
	{ key: 'status', label: 'Upstream', render: (r) => statusBadge(r.status) },
	{ key: 'hosts_1d', label: 'Hosts 1\u00a0d', num: true },
	{ key: 'hosts_7d', label: 'Hosts 7\u00a0d', num: true },
	{ key: 'hosts_30d', label: 'Hosts 30\u00a0d', num: true },
	{ key: 'share_v1_30d', label: 'Share of v1 hosts', num: true, render: (r) => fmtShare(r.share_v1_30d) },
	{ key: 'uses', label: 'Uses', num: true },
	{ key: 'workloads', label: 'Workloads', num: true },
	{ key: 'replacement', label: 'cgroup v2 replacement', text: true },
];
// A feature nobody was seen using: "not measured" when nothing in the
// fleet could have seen a use (measured false), else "not seen".
const seenWords = (r) => (r.measured === false ? 'not measured' : 'not seen');
const SEEN_COLUMN = {
	key: 'seen', label: 'Last 30\u00a0days', value: seenWords,
	render: (r) => h('span', { class: seenWords(r).replace(' ', '-') }, seenWords(r)),
};
const UNUSED_COLUMNS = COLUMNS.filter((c) => ['title', 'status'].includes(c.key))
	.concat(SEEN_COLUMN, COLUMNS.filter((c) => c.key === 'replacement'));

function stat(id, n, label) {
	return h('div', { class: 'stat', id: 'stat-' + id }, h('div', { class: 'n' }, fmtNum(n || 0)), h('div', { class: 'l' }, label));
}

function stats(hosts) {
	const modes = hosts.by_cgroup_mode || {};
	return h('div', { class: 'stats', id: 'overview-stats' },
		stat('hosts-total', hosts.total, 'hosts known'),
		stat('hosts-30d', hosts.reporting_30d, 'reporting in 30 days'),
		stat('mode-v1', modes.v1, 'cgroup v1'),
		stat('mode-hybrid', modes.hybrid, 'hybrid'),
		stat('mode-v2', modes.v2, 'cgroup v2'));
}

// What the counts could see (the summary's coverage), from the latest
// report of each host that sent coverage facts.
function coverage(cov) {
	if (!cov)
		return banner('info', 'This server does not say what the counts could see (no coverage in its summary).');
	return h('section', { id: 'coverage' },
		h('h2', {}, 'Coverage'),
		h('div', { class: 'stats', id: 'coverage-stats' },
			stat('cov-hosts', cov.hosts, 'hosts that sent coverage facts'),
			stat('cov-bpf', cov.bpf_memory, 'BPF attached to the memory controller'),
			stat('cov-kmsg', cov.kmsg_only, 'kernel log only'),
			stat('cov-boot', cov.boot_uncovered, 'boot start not covered by a log source'),
			stat('cov-lost', cov.records_lost, 'kernel log records lost'),
			stat('cov-probe', cov.probe_missing, 'BPF probes missing')),
		h('p', { class: 'muted' }, 'BPF counts memory controller files only: cpuset, freezer, blkio and cgroup core ' +
			'features are seen through kernel warnings alone.' + (cov.bpf_memory > 0 ? '' :
			' No host has BPF attached to the memory controller, so a memory feature nobody was seen using is not measured either.')));
}

// The summary's rows, named and described by the catalog where it knows them.
function featureRows(sum) {
	return (sum.features || []).map((f) => {
		const c = feature(f.id) || {};
		return Object.assign({}, f, {
			title: c.title || f.title || f.id,
			status: c.status || f.status,
			replacement: c.replacement || f.replacement,
		});
	});
}

// Trend: hosts using each of the (at most 8) most used features per day.
async function trend(view, used) {
	const top = used.slice().sort((a, b) => b.hosts_30d - a.hosts_30d).slice(0, 8);
	if (!top.length)
		return;
	// The feature page's own request (no range), so a large fleet's kept
	// detail serves both (docs/api.md, "Kept answers"); the chart keeps
	// the last 30 days of its daily timeline.
	const since = Math.floor(Date.now() / 1000 / DAY - 29) * DAY;
	const details = await Promise.all(top.map((f) =>
		api('/api/v1/features/' + encodeURIComponent(f.id)).catch(() => null)));
	if (!view.current())
		return;
	for (const d of details)
		if (d && d.timeline)
			d.timeline = d.timeline.filter((p) => p.day >= since);
	const days = dayAxis(details.map((d) => d && d.timeline), 30);
	const series = details.map((d, i) => ({ label: top[i].title, values: onAxis(days, d && d.timeline, 'hosts') }));
	document.getElementById('trend').replaceChildren(lineChart('Hosts using each feature per day', days, series));
}

export async function pageOverview(view) {
	setMain(h('h1', {}, 'Deprecated kernel features in the fleet'), banner('loading', 'Loading the fleet summary…'));
	const [sum, ann] = await Promise.all([api('/api/v1/summary'), api('/api/v1/annotations')]);
	if (!view.current())
		return;
	const rows = featureRows(sum);
	const used = rows.filter((r) => r.hosts_30d > 0);
	const unused = rows.filter((r) => !(r.hosts_30d > 0));
	const explained = new Set((ann.annotations || []).map((a) => a.feature));
	setMain(h('h1', {}, 'Deprecated kernel features in the fleet'), stats(sum.hosts || {}), coverage(sum.coverage),
		h('h2', {}, 'Features in use (last 30 days)'),
		table(COLUMNS, used, { id: 'features', empty: 'No host used a deprecated feature in the last 30 days.' }),
		h('div', { id: 'trend' }),
		h('h2', {}, 'Needs a use case'),
		h('p', { class: 'muted' }, 'In use, and nobody has recorded why: the linux-mm export says "No use case recorded" for these.'),
		table(COLUMNS.filter((c) => ['title', 'hosts_30d', 'workloads'].includes(c.key)), used.filter((r) => !explained.has(r.id)),
			{ id: 'needs-usecase', empty: 'Every feature in use has a use case recorded.' }),
		h('h2', {}, 'Not seen in use'),
		h('p', { class: 'muted' }, '"Not measured": nothing in the fleet could have seen a use, so no use is no evidence.'),
		table(UNUSED_COLUMNS, unused,
			{ id: 'unused', empty: 'Every catalog feature is in use somewhere.' }),
		h('p', { class: 'muted' }, 'Catalog version ' + catalogVersion() + '. Summary generated ' + fmtTime(sum.generated) + '.'));
	await trend(view, used);
}
