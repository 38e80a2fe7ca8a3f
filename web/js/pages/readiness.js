// Upgrade readiness (#/readiness?target=NAME): which hosts and workloads
// break if the fleet moves to a target kernel (GET /api/v1/readiness),
// with the kind of use, the evidence and the migration status set for
// each feature and workload; hosts ready; hosts not measured.
// The target is chosen from GET /api/v1/targets and kept in the URL, as are
// the host label to group by (group=KEY) and the label the hosts counted
// must carry (label=KEY=VALUE, the API's own filter).
import { answerAge, api, query } from '../api.js';
import { banner, h, hostLink, keptBanner, setMain } from '../dom.js';
import { fmtNum } from '../format.js';
import { updateParams } from '../router.js';
import { featureLink } from '../session.js';
import { table } from '../table.js';
import { migrationText } from './migration.js';

function stat(id, n, label) {
	return h('div', { class: 'stat', id: 'stat-' + id }, h('div', { class: 'n' }, fmtNum(n || 0)), h('div', { class: 'l' }, label));
}

function chooser(targets, current, group, label) {
	const sel = h('select', { id: 'f-target' }, targets.map((t) =>
		h('option', { value: t.name, selected: t.name === current }, t.name + (t.kernel ? ' (' + t.kernel + ')' : ''))));
	const fLabel = h('input', { id: 'f-label', value: label || '', placeholder: 'team=payments' });
	const fGroup = h('input', { id: 'f-group', value: group || '', placeholder: 'team' });
	return h('form', {
		class: 'filters', onsubmit: (ev) => {
			ev.preventDefault();
			updateParams({ target: sel.value, label: fLabel.value.trim(), group: fGroup.value.trim() });
		},
	}, h('label', {}, 'Target kernel', sel), h('label', {}, 'Only hosts with label', fLabel),
	h('label', {}, 'Group by label', fGroup), h('button', { type: 'submit' }, 'Show'));
}

// The hosts by the value of the label chosen (GET /api/v1/readiness's
// group=label:KEY): how many break, are ready, are not measured.
function groups(g) {
	if (!g)
		return null;
	return [h('h2', {}, 'By label ' + g.label), table([
		{ key: 'value', label: g.label, text: true, value: (x) => (x.value === null ? '(no ' + g.label + ' label)' : x.value) },
		{ key: 'hosts', label: 'Hosts', num: true },
		{ key: 'breaks', label: 'Would break', num: true },
		{ key: 'ready', label: 'Ready', num: true },
		{ key: 'not_measured', label: 'Not measured', num: true },
	], g.values || [], { id: 'groups', empty: 'No host seen.' })];
}

const kind = (k) => (x) => (x.by_kind || {})[k] || 0;
const ev = (k) => (x) => (x.evidence || {})[k] || 0;

const FEATURE_COLUMNS = [
	{ key: 'id', label: 'Feature', text: true, render: (x) => featureLink(x.id) },
	{ key: 'hosts', label: 'Hosts', num: true },
	{ key: 'configures', label: 'Configure', num: true, value: kind('configures') },
	{ key: 'listens', label: 'Listen', num: true, value: kind('listens') },
	{ key: 'reading_only', label: 'Read only', num: true, value: kind('reading_only') },
	{ key: 'bpf_hosts', label: 'BPF hosts', num: true, value: ev('bpf_hosts') },
	{ key: 'census', label: 'Census hosts', num: true, value: (x) => ev('census_knob_hosts')(x) + ev('v1_hierarchy_hosts')(x) },
	{ key: 'warned', label: 'Kernel warned', num: true, value: ev('kernel_warning_hosts') },
	{ key: 'migration', label: 'Migration status', text: true, value: (x) => migrationText(x.migration) },
];

const HOST_COLUMNS = [
	{ key: 'hostname', label: 'Host', text: true, render: (x) => hostLink(x.host_id, x.hostname) },
	{ key: 'kernel', label: 'Kernel', text: true },
	{ key: 'cgroup_mode', label: 'cgroup mode' },
	{ key: 'features', label: 'Would lose', text: true, value: (x) => (x.features || []).join(', ') },
	{ key: 'runtimes', label: 'Runs', text: true,
		value: (x) => (x.runtimes || []).map((r) => r.name + (r.version ? ' ' + r.version : '')).join(', ') },
];

const WORKLOAD_COLUMNS = [
	{ key: 'feature', label: 'Feature', text: true, render: (x) => featureLink(x.feature) },
	{ key: 'comm', label: 'Process', text: true },
	{ key: 'container', label: 'Where', text: true },
	{ key: 'target_kind', label: 'Cgroup configured', text: true },
	{ key: 'ops', label: 'How', text: true, value: (x) => (Array.isArray(x.ops) ? x.ops.join(', ') : x.ops) },
	{ key: 'hosts', label: 'Hosts', num: true },
	{ key: 'count', label: 'Uses', num: true },
	{ key: 'migration', label: 'Migration status', text: true, value: (x) => migrationText(x.migration) },
];

function planNote(plan) {
	const ids = (l) => (l || []).map((f) => f.id).join(', ') || 'none';
	return h('p', { class: 'muted', id: 'readiness-plan' },
		'Removed on this target: ' + ids(plan.removed) + '. No longer effective: ' + ids(plan.no_op) + '.' +
		((plan.unstated || []).length ? ' Not stated by the target: ' + plan.unstated.join(', ') + '.' : ''));
}

function deadlines(list) {
	if (!list || !list.length)
		return null;
	return [h('h2', {}, 'User-space deadlines'), table([
		{ key: 'runtime', label: 'Runtime', text: true },
		{ key: 'version', label: 'From version', text: true },
		{ key: 'effect', label: 'Effect', text: true },
		{ key: 'hosts', label: 'Hosts affected', num: true },
	], list, { id: 'deadlines', empty: 'None.' })];
}

export async function pageReadiness(view) {
	setMain(h('h1', {}, 'Upgrade readiness'), banner('loading', 'Loading targets…'));
	const t = await api('/api/v1/targets');
	const targets = t.targets || [];
	if (!view.current())
		return;
	if (!targets.length) {
		setMain(h('h1', {}, 'Upgrade readiness'), banner('error', 'The server knows no target kernel.'));
		return;
	}
	const name = view.params.get('target') || targets[0].name;
	const group = view.params.get('group') || '';
	const label = view.params.get('label') || '';
	const r = await api(query('/api/v1/readiness', { target: name, label, group: group ? 'label:' + group : '' }));
	if (!view.current())
		return;
	const b = r.breaks || {};
	const workloads = (b.features || []).flatMap((f) => (f.workloads || []).map((w) => ({ feature: f.id, ...w })));
	setMain(h('h1', {}, 'Upgrade readiness'), keptBanner(answerAge(r), 'readiness-kept', 'this answer'),
		chooser(targets, name, group, label), planNote(r.plan || {}),
		h('div', { class: 'stats', id: 'readiness-stats' },
			stat('breaks', b.count, 'hosts would break'),
			stat('ready', (r.ready || {}).count, 'hosts ready'),
			stat('not-measured', (r.not_measured || {}).count, 'hosts not measured (kernel log only)')),
		r.label ? h('p', { class: 'muted', id: 'readiness-label' }, 'Only the hosts with label ' + r.label + '.') : null,
		groups(r.groups),
		h('h2', {}, 'What breaks'),
		table(FEATURE_COLUMNS, b.features || [], { id: 'breaks', empty: 'No host uses a feature this target removes.' }),
		h('h2', {}, 'Workloads'),
		table(WORKLOAD_COLUMNS, workloads, { id: 'break-workloads', empty: 'No workload named by BPF.' }),
		h('h2', {}, 'Hosts that would break'),
		table(HOST_COLUMNS, b.hosts || [], { id: 'break-hosts', empty: 'None.' }),
		h('h2', {}, 'Hosts not measured'),
		h('p', { class: 'muted' }, 'Their agents send kernel messages only (no BPF, no census): silent features cannot be seen there.'),
		table(HOST_COLUMNS.slice(0, 3), (r.not_measured || {}).hosts || [], { id: 'not-measured', empty: 'None.' }),
		deadlines(r.deadlines));
}
