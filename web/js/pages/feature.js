// The feature page (#/feature/<id>?since&until&label): what the catalog says,
// how much the fleet (with label: the hosts carrying it) uses it, by whom,
// the recorded use cases, where the migration off it stands, and the
// linux-mm export.
import { answerAge, api, query } from '../api.js';
import { dayAxis, lineChart, onAxis } from '../chart.js';
import { banner, h, keptBanner, setMain, statusBadge } from '../dom.js';
import { fmtDay, fmtNum, fmtTime, parseDay } from '../format.js';
import { updateParams } from '../router.js';
import { feature } from '../session.js';
import { table } from '../table.js';
import { annotationsSection } from './annotations.js';
import { exportSection } from './export.js';
import { migrationSection } from './migration.js';

function rangeFilters(params) {
	const since = h('input', { type: 'date', id: 'f-since', value: fmtDay(params.get('since')) });
	const until = h('input', { type: 'date', id: 'f-until', value: fmtDay(params.get('until')) });
	return h('form', {
		class: 'filters', onsubmit: (ev) => {
			ev.preventDefault();
			updateParams({ since: parseDay(since.value), until: parseDay(until.value) });
		},
	}, h('label', {}, 'Since', since), h('label', {}, 'Until', until), h('button', { type: 'submit' }, 'Apply'));
}

function warningText(c) {
	if (!c)
		return '–';
	if (!c.warns)
		return 'none: the kernel prints nothing';
	return 'since ' + (c.kernel_version || '?') + ' (' + (c.commit || '?') + ')';
}

function infoCard(id, c, d) {
	const w = d.warnings || { count: 0, hosts: 0 };
	return h('div', { class: 'card' }, h('dl', { class: 'kv' },
		h('dt', {}, 'Id'), h('dd', {}, h('code', {}, id)),
		h('dt', {}, 'Upstream status'), h('dd', {}, statusBadge(c ? c.status : d.status)),
		h('dt', {}, 'Control files'), h('dd', {}, c && c.files ? c.files.join(', ') : '–'),
		h('dt', {}, 'Kernel warning'), h('dd', {}, warningText(c)),
		h('dt', {}, 'cgroup v2 replacement'), h('dd', {}, (c && c.replacement) || '–'),
		h('dt', {}, 'Does it fit?'), h('dd', {}, (c && c.replacement_note) || '–'),
		h('dt', {}, 'Hosts using it'), h('dd', { id: 'feature-hosts' }, fmtNum(d.hosts)),
		h('dt', {}, 'of which configure it'), h('dd', { id: 'feature-configuring' }, fmtNum(d.hosts_configuring)),
		h('dt', {}, 'of which listen to it'), h('dd', { id: 'feature-listening' }, fmtNum(d.hosts_listening)),
		h('dt', {}, 'Hosts only reading it'), h('dd', { id: 'feature-reading' },
			fmtNum(d.hosts_reading_only) + ' (monitoring; never counted as using it)'),
		h('dt', {}, 'Uses (writes and registrations)'), h('dd', { id: 'feature-uses' }, fmtNum(d.uses)),
		h('dt', {}, 'Reads'), h('dd', { id: 'feature-reads' }, fmtNum(d.reads)),
		h('dt', {}, 'Kernel warnings seen'), h('dd', {}, fmtNum(w.count) + ' on ' + fmtNum(w.hosts) + ' hosts'),
		h('dt', {}, 'First seen'), h('dd', {}, fmtTime(d.first_seen)),
		h('dt', {}, 'Last seen'), h('dd', {}, fmtTime(d.last_seen))));
}

// The values written, in the words the server makes of them
// (values.classes, one line each); none recorded is said plainly.
function valuesCard(v) {
	const classes = (v && v.classes) || [];
	let none = 'No values recorded in this range (agents send them with wire format 2 and BPF; the census reports non-default knobs).';
	if (v && v.kind === 'none')
		none = 'Writes to this feature carry no value worth showing (reads, resets, events or states).';
	return h('div', { class: 'card' }, h('h2', {}, 'Values written'),
		classes.length ?
			h('ul', { id: 'feature-values' }, ...classes.map((c) => h('li', {}, c))) :
			h('p', { id: 'feature-values', class: 'muted' }, none));
}

// The daily timeline is kept for the whole fleet only: a page counting the
// hosts of one label (timeline_scope "none") says so instead of charting.
function charts(d) {
	if (d.timeline_scope === 'none')
		return h('p', { id: 'feature-timeline', class: 'muted' },
			'No daily charts for the hosts of one label: the server keeps the timeline for the whole fleet only.');
	const tl = d.timeline || [];
	const days = dayAxis([tl], 30);
	return h('div', { class: 'row' },
		lineChart('Hosts using it per day', days, [{ label: 'hosts', values: onAxis(days, tl, 'hosts') }]),
		lineChart('Uses per day', days, [{ label: 'uses', values: onAxis(days, tl, 'uses') }]));
}

// container: where the writing process runs, as the agent names it from
// the writer's own cgroup (docker:<id>, cri-containerd:<id>, systemd:<unit>).
const NONE = { process: '(unknown)', container: '(no container or unit)', cgroup: '(root)' };

function topTable(key, label, rows, id) {
	return table([
		{ key, label, text: true, render: (r) => (r[key] ? r[key] : h('span', { class: 'muted' }, NONE[key])) },
		{ key: 'hosts', label: 'Hosts', num: true },
		{ key: 'uses', label: 'Uses', num: true },
	], rows || [], { id });
}

function usage(d) {
	return [
		h('div', { class: 'row' },
			h('div', {}, h('h2', {}, 'Processes'), topTable('process', 'Process', d.processes, 'processes')),
			h('div', {}, h('h2', {}, 'Where the writers run'), topTable('container', 'Container or systemd unit', d.containers, 'containers'))),
		h('h2', {}, 'Cgroups'), topTable('cgroup', 'Cgroup', d.top_cgroups, 'cgroups'),
		h('h2', {}, 'Kernel versions'), table([
			{ key: 'kernel', label: 'Kernel release', text: true },
			{ key: 'hosts', label: 'Hosts', num: true }], d.kernels || [], { id: 'kernels' }),
	];
}

export async function pageFeature(view) {
	const id = view.args.id;
	const c = feature(id);
	const params = view.params;
	setMain(h('h1', {}, c ? c.title : id), banner('loading', 'Loading…'));
	const [d, ann, mig] = await Promise.all([
		api(query('/api/v1/features/' + encodeURIComponent(id),
			{ since: params.get('since'), until: params.get('until'), label: params.get('label') })),
		api('/api/v1/annotations?feature=' + encodeURIComponent(id)),
		api(query('/api/v1/migration-status', { feature: id })),
	]);
	if (!view.current())
		return;
	setMain(h('h1', {}, c ? c.title : id), keptBanner(answerAge(d), 'feature-kept', 'this detail'),
		rangeFilters(params), infoCard(id, c, d), valuesCard(d.values),
		charts(d),
		usage(d),
		h('p', {}, h('a', { href: '#/hosts?feature=' + encodeURIComponent(id) }, 'Hosts using this feature →')),
		annotationsSection(id, ann.annotations || []),
		migrationSection(id, mig.statuses || []),
		exportSection(id, params));
}
