// twilight dashboard: a small single-page app over the JSON API (docs/api.md).
//
// Rules this file keeps:
// - Every string that came from a host (process names, cgroup paths,
//   hostnames, kernel messages) reaches the page through textContent or
//   setAttribute, never innerHTML. The CSP forbids inline script anyway.
// - Feature names, statuses and replacements come from GET /api/v1/catalog;
//   there is no second copy of the catalog here.
// - The token lives in sessionStorage and travels as an Authorization
//   header (no cookies, so no CSRF).
// - Filters live in the URL (#/path?query) so a view can be shared.

const TOKEN_KEY = 'twilight.token';
const main = document.getElementById('main');
let catalog = null; // {version, features: [...]}, loaded once per sign-in
let catalogById = new Map();
let me = null; // {name, role} of the signed-in token (GET /api/v1/whoami)
let renderSeq = 0; // drops results of superseded navigations

// ---- DOM helpers ---------------------------------------------------------

// h(tag, attrs, ...children): build an element. Strings become text nodes.
function h(tag, attrs, ...children) {
	const el = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === undefined || v === null || v === false)
			continue;
		if (k.startsWith('on') && typeof v === 'function')
			el.addEventListener(k.slice(2), v);
		else if (k === 'class')
			el.className = v;
		else
			el.setAttribute(k, v === true ? '' : String(v));
	}
	for (const c of children.flat(Infinity)) {
		if (c === undefined || c === null || c === false)
			continue;
		el.append(c instanceof Node ? c : document.createTextNode(String(c)));
	}
	return el;
}

function setMain(...nodes) {
	main.replaceChildren(...nodes);
}

function fmtNum(n) {
	if (n === null || n === undefined)
		return '–';
	return Number(n).toLocaleString('en-US');
}

function fmtShare(x) {
	if (x === null || x === undefined)
		return '–';
	return (100 * x).toFixed(x < 0.1 ? 1 : 0) + '%';
}

function fmtTime(t) {
	if (!t)
		return '–';
	return new Date(t * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

function fmtAgo(t) {
	if (!t)
		return 'never';
	const s = Math.max(0, Date.now() / 1000 - t);
	if (s < 120)
		return Math.round(s) + ' s ago';
	if (s < 7200)
		return Math.round(s / 60) + ' min ago';
	if (s < 172800)
		return Math.round(s / 3600) + ' h ago';
	return Math.round(s / 86400) + ' days ago';
}

function statusBadge(status) {
	const s = status || 'unknown';
	return h('span', { class: 'status status-' + s.replace(/[^a-z-]/g, '') }, s);
}

function featureTitle(id) {
	const f = catalogById.get(id);
	return f ? f.title : id;
}

function featureLink(id) {
	return h('a', { href: '#/feature/' + encodeURIComponent(id) }, featureTitle(id));
}

function hostLink(id, name) {
	return h('a', { href: '#/host/' + encodeURIComponent(id) }, name || id);
}

function banner(kind, text) {
	return h('div', { class: 'banner ' + kind, role: kind === 'error' ? 'alert' : 'status' }, text);
}

// ---- sortable tables -----------------------------------------------------

// table(columns, rows): columns = [{key, label, num, render(row), value(row)}].
// Clicking a header sorts by that column (numbers numerically), again
// reverses. The sort is kept in the URL as ?sort=key:dir when a tableId
// is given, so a sorted view can be shared too.
function table(columns, rows, opts = {}) {
	const state = { key: null, dir: 1 };
	const route = currentRoute();
	if (opts.id && route.params.get('sort_' + opts.id)) {
		const [k, d] = route.params.get('sort_' + opts.id).split(':');
		state.key = k;
		state.dir = d === 'desc' ? -1 : 1;
	}
	const tbody = h('tbody');
	const ths = columns.map((c) =>
		h('th', {
			class: 'sortable' + (c.num ? ' num' : ''),
			scope: 'col',
			'data-key': c.key,
			onclick: () => {
				state.dir = state.key === c.key ? -state.dir : (c.num ? -1 : 1);
				state.key = c.key;
				if (opts.id)
					updateParams({ ['sort_' + opts.id]: state.key + ':' + (state.dir < 0 ? 'desc' : 'asc') }, true);
				paint();
			},
		}, c.label));
	function value(c, r) {
		return c.value ? c.value(r) : r[c.key];
	}
	function paint() {
		let data = rows.slice();
		const col = columns.find((c) => c.key === state.key);
		if (col) {
			data.sort((a, b) => {
				const x = value(col, a), y = value(col, b);
				if (x === y)
					return 0;
				if (x === null || x === undefined)
					return 1;
				if (y === null || y === undefined)
					return -1;
				return (col.num ? x - y : String(x).localeCompare(String(y))) * state.dir;
			});
		}
		ths.forEach((th) => {
			th.classList.toggle('sorted-asc', th.dataset.key === state.key && state.dir > 0);
			th.classList.toggle('sorted-desc', th.dataset.key === state.key && state.dir < 0);
		});
		tbody.replaceChildren(...data.map((r) =>
			h('tr', {}, columns.map((c) =>
				h('td', { class: c.num ? 'num' : (c.text ? 'text' : '') },
					c.render ? c.render(r) : (c.num ? fmtNum(r[c.key]) : r[c.key]))))));
		if (!data.length)
			tbody.replaceChildren(h('tr', {}, h('td', { colspan: columns.length, class: 'muted' }, opts.empty || 'Nothing to show.')));
	}
	paint();
	return h('table', { id: opts.id ? 'table-' + opts.id : null }, h('thead', {}, h('tr', {}, ths)), tbody);
}

// ---- charts (uPlot, served by twilight-server from npm) ------------------

const DAY = 86400;

// dayAxis(timelines, minDays): every day (Unix seconds at 00:00 UTC) from
// the earliest point (or minDays before today, whichever is earlier) to
// today, so a single data point still draws a readable month, not years.
function dayAxis(timelines, minDays) {
	const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
	let first = today - (minDays - 1) * DAY;
	for (const tl of timelines)
		for (const p of tl || [])
			first = Math.min(first, Math.floor(p.day / DAY) * DAY);
	first = Math.max(first, today - 365 * DAY);
	const days = [];
	for (let d = first; d <= today; d += DAY)
		days.push(d);
	return days;
}

// onAxis(days, timeline, key): the timeline's key values on the day axis, 0 where absent.
function onAxis(days, timeline, key) {
	const m = new Map((timeline || []).map((p) => [Math.floor(p.day / DAY) * DAY, p[key]]));
	return days.map((d) => m.get(d) || 0);
}

function lineChart(title, days, series) {
	const box = h('div', { class: 'chart', 'aria-label': title });
	if (typeof uPlot === 'undefined') {
		box.append(banner('error', 'Chart library failed to load (/vendor/uPlot.iife.min.js).'));
		return box;
	}
	if (!days.length) {
		box.append(h('p', { class: 'muted' }, title + ': no data in this range.'));
		return box;
	}
	const palette = ['#3b4fd1', '#b35c00', '#1e7a3c', '#b3261e', '#7a3cb3', '#00838f', '#6d4c41', '#c2185b'];
	const opts = {
		title,
		width: Math.max(300, Math.min(1200, (box.clientWidth || main.clientWidth) - 20)),
		height: 220,
		series: [{}].concat(series.map((s, i) => ({ label: s.label, stroke: palette[i % palette.length], width: 2 }))),
		axes: [{}, { size: 60 }],
		scales: { x: { time: true } },
	};
	// uPlot needs the element attached to measure; build after insertion.
	requestAnimationFrame(() => {
		try {
			opts.width = Math.max(300, Math.min(1200, (box.clientWidth || main.clientWidth) - 20));
			new uPlot(opts, [days].concat(series.map((s) => s.values)), box);
		} catch (e) {
			box.append(banner('error', 'Chart failed: ' + e.message));
		}
	});
	return box;
}

// ---- routing and URL state -----------------------------------------------

function currentRoute() {
	const raw = location.hash.replace(/^#/, '') || '/';
	const q = raw.indexOf('?');
	const path = q < 0 ? raw : raw.slice(0, q);
	const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
	return { path, params };
}

// updateParams(obj, quiet): merge obj into the hash query (empty values
// remove a key). quiet = replace the history entry without re-rendering.
function updateParams(obj, quiet) {
	const { path, params } = currentRoute();
	for (const [k, v] of Object.entries(obj)) {
		if (v === '' || v === null || v === undefined)
			params.delete(k);
		else
			params.set(k, v);
	}
	const qs = params.toString();
	const hash = '#' + path + (qs ? '?' + qs : '');
	if (quiet)
		history.replaceState(null, '', hash);
	else
		location.hash = hash;
}

// ---- API -----------------------------------------------------------------

class ApiError extends Error {
	constructor(status, body, path) {
		const reason = body && (body.reason || body.error) ? (body.reason || body.error) : 'HTTP ' + status;
		super(path + ': ' + reason + (body && body.field ? ' (field ' + body.field + ')' : ''));
		this.status = status;
		this.body = body;
	}
}

async function api(path, { method = 'GET', body, text = false } = {}) {
	const token = sessionStorage.getItem(TOKEN_KEY);
	const headers = { Authorization: 'Bearer ' + token };
	if (body !== undefined)
		headers['Content-Type'] = 'application/json';
	let resp;
	try {
		resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
	} catch (e) {
		throw new Error(path + ': the server did not answer (' + e.message + '). Is twilight-server running?');
	}
	if (resp.status === 401) {
		sessionStorage.removeItem(TOKEN_KEY);
		throw new ApiError(401, { reason: 'the token was rejected (revoked or mistyped): sign in again' }, path);
	}
	if (!resp.ok) {
		let b = null;
		try {
			b = await resp.json();
		} catch (e) {
			b = null;
		}
		if (resp.status === 403 && (!b || !b.reason))
			b = { reason: 'this needs an admin token' };
		throw new ApiError(resp.status, b, path);
	}
	return text ? resp.text() : resp.json();
}

async function loadCatalog() {
	catalog = await api('/api/v1/catalog');
	catalogById = new Map(catalog.features.map((f) => [f.id, f]));
	// Who is signed in: the page offers only what the role may do.
	me = await api('/api/v1/whoami');
	document.getElementById('who').textContent = 'signed in as ' + me.name + ' (' + me.role + ')';
}

// ---- pages ---------------------------------------------------------------

function signIn(message) {
	document.getElementById('nav').hidden = true;
	document.getElementById('signout').hidden = true;
	document.getElementById('who').textContent = '';
	const tpl = document.getElementById('signin-tpl').content.cloneNode(true);
	setMain(tpl);
	const form = document.getElementById('signin-form');
	const err = document.getElementById('signin-error');
	if (message)
		err.textContent = message;
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		const token = document.getElementById('token').value.trim();
		if (!token) {
			err.textContent = 'Paste a token first.';
			return;
		}
		sessionStorage.setItem(TOKEN_KEY, token);
		err.textContent = '';
		try {
			await loadCatalog();
		} catch (e) {
			sessionStorage.removeItem(TOKEN_KEY);
			err.textContent = 'Sign-in failed: ' + e.message;
			return;
		}
		route();
	});
	document.getElementById('token').focus();
}

async function pageOverview(seq) {
	setMain(h('h1', {}, 'Deprecated kernel features in the fleet'), banner('loading', 'Loading the fleet summary…'));
	const sum = await api('/api/v1/summary');
	if (seq !== renderSeq)
		return;
	const hosts = sum.hosts || {};
	const modes = hosts.by_cgroup_mode || {};
	const stats = h('div', { class: 'stats', id: 'overview-stats' },
		stat('hosts-total', hosts.total, 'hosts known'),
		stat('hosts-30d', hosts.reporting_30d, 'reporting in 30 days'),
		stat('mode-v1', modes.v1, 'cgroup v1'),
		stat('mode-hybrid', modes.hybrid, 'hybrid'),
		stat('mode-v2', modes.v2, 'cgroup v2'));
	const rows = (sum.features || []).map((f) => {
		const c = catalogById.get(f.id) || {};
		return Object.assign({}, f, {
			title: c.title || f.title || f.id,
			status: c.status || f.status,
			replacement: c.replacement || f.replacement,
		});
	});
	const cols = [
		{ key: 'title', label: 'Feature', render: (r) => featureLink(r.id) },
		{ key: 'status', label: 'Upstream', render: (r) => statusBadge(r.status) },
		{ key: 'hosts_1d', label: 'Hosts 1 d', num: true },
		{ key: 'hosts_7d', label: 'Hosts 7 d', num: true },
		{ key: 'hosts_30d', label: 'Hosts 30 d', num: true },
		{ key: 'share_v1_30d', label: 'Share of v1 hosts', num: true, render: (r) => fmtShare(r.share_v1_30d) },
		{ key: 'uses', label: 'Uses', num: true },
		{ key: 'workloads', label: 'Workloads', num: true },
		{ key: 'replacement', label: 'cgroup v2 replacement', text: true },
	];
	const used = rows.filter((r) => r.hosts_30d > 0);
	const unused = rows.filter((r) => !(r.hosts_30d > 0));
	setMain(h('h1', {}, 'Deprecated kernel features in the fleet'), stats,
		h('h2', {}, 'Features in use (last 30 days)'),
		table(cols, used, { id: 'features', empty: 'No host used a deprecated feature in the last 30 days.' }),
		h('div', { id: 'trend' }),
		h('h2', {}, 'Not seen in use'),
		table(cols.filter((c) => !['hosts_1d', 'hosts_7d', 'uses', 'workloads', 'share_v1_30d'].includes(c.key)), unused,
			{ id: 'unused', empty: 'Every catalog feature is in use somewhere.' }),
		h('p', { class: 'muted' }, 'Catalog version ' + (catalog ? catalog.version : '?') + '. Summary generated ' + fmtTime(sum.generated) + '.'));
	// Trend: hosts using each in-use feature per day, from the feature timelines.
	const top = used.sort((a, b) => b.hosts_30d - a.hosts_30d).slice(0, 8);
	if (top.length) {
		const since = Math.floor(Date.now() / 1000) - 30 * 86400;
		const details = await Promise.all(top.map((f) =>
			api('/api/v1/features/' + encodeURIComponent(f.id) + '?since=' + since).catch(() => null)));
		if (seq !== renderSeq)
			return;
		const days = dayAxis(details.map((d) => d && d.timeline), 30);
		const series = details.map((d, i) => ({ label: top[i].title, values: onAxis(days, d && d.timeline, 'hosts') }));
		document.getElementById('trend').replaceChildren(lineChart('Hosts using each feature per day', days, series));
	}
}

function stat(id, n, label) {
	return h('div', { class: 'stat', id: 'stat-' + id }, h('div', { class: 'n' }, fmtNum(n || 0)), h('div', { class: 'l' }, label));
}

async function pageFeature(seq, id) {
	const c = catalogById.get(id);
	const { params } = currentRoute();
	setMain(h('h1', {}, c ? c.title : id), banner('loading', 'Loading…'));
	const q = new URLSearchParams();
	for (const k of ['since', 'until'])
		if (params.get(k))
			q.set(k, params.get(k));
	const [d, ann] = await Promise.all([
		api('/api/v1/features/' + encodeURIComponent(id) + (q.toString() ? '?' + q : '')),
		api('/api/v1/annotations?feature=' + encodeURIComponent(id)),
	]);
	if (seq !== renderSeq)
		return;
	const info = h('dl', { class: 'kv' },
		h('dt', {}, 'Id'), h('dd', {}, h('code', {}, id)),
		h('dt', {}, 'Upstream status'), h('dd', {}, statusBadge(c ? c.status : d.status)),
		h('dt', {}, 'Control files'), h('dd', {}, c && c.files ? c.files.join(', ') : '–'),
		h('dt', {}, 'Kernel warning'), h('dd', {}, c ? (c.warns ? 'since ' + (c.kernel_version || '?') + ' (' + (c.commit || '?') + ')' : 'none: the kernel prints nothing') : '–'),
		h('dt', {}, 'cgroup v2 replacement'), h('dd', {}, (c && c.replacement) || '–'),
		h('dt', {}, 'Does it fit?'), h('dd', {}, (c && c.replacement_note) || '–'),
		h('dt', {}, 'Hosts'), h('dd', { id: 'feature-hosts' }, fmtNum(d.hosts)),
		h('dt', {}, 'Uses'), h('dd', { id: 'feature-uses' }, fmtNum(d.uses)),
		h('dt', {}, 'Kernel warnings seen'), h('dd', {}, fmtNum(d.warnings ? d.warnings.count : 0) + ' on ' + fmtNum(d.warnings ? d.warnings.hosts : 0) + ' hosts'),
		h('dt', {}, 'First seen'), h('dd', {}, fmtTime(d.first_seen)),
		h('dt', {}, 'Last seen'), h('dd', {}, fmtTime(d.last_seen)));
	const filt = rangeFilters(params);
	const tl = d.timeline || [];
	const days = dayAxis([tl], 30);
	const chart = h('div', { class: 'row' },
		lineChart('Hosts using it per day', days, [{ label: 'hosts', values: onAxis(days, tl, 'hosts') }]),
		lineChart('Uses per day', days, [{ label: 'uses', values: onAxis(days, tl, 'uses') }]));
	// container: where the writing process runs, as the agent names it from
	// the writer's own cgroup (docker:<id>, cri-containerd:<id>, systemd:<unit>).
	const none = { process: '(unknown)', container: '(no container or unit)', cgroup: '(root)' };
	const top = (key, label, rows, tid) => table([
		{ key, label, text: true, render: (r) => (r[key] ? r[key] : h('span', { class: 'muted' }, none[key])) },
		{ key: 'hosts', label: 'Hosts', num: true },
		{ key: 'uses', label: 'Uses', num: true },
	], rows || [], { id: tid });
	setMain(h('h1', {}, c ? c.title : id), filt, h('div', { class: 'card' }, info), chart,
		h('div', { class: 'row' },
			h('div', {}, h('h2', {}, 'Processes'), top('process', 'Process', d.processes, 'processes')),
			h('div', {}, h('h2', {}, 'Where the writers run'), top('container', 'Container or systemd unit', d.containers, 'containers'))),
		h('h2', {}, 'Cgroups'), top('cgroup', 'Cgroup', d.top_cgroups, 'cgroups'),
		h('h2', {}, 'Kernel versions'), table([
			{ key: 'kernel', label: 'Kernel release', text: true },
			{ key: 'hosts', label: 'Hosts', num: true }], d.kernels || [], { id: 'kernels' }),
		h('p', {}, h('a', { href: '#/hosts?feature=' + encodeURIComponent(id) }, 'Hosts using this feature →')),
		annotationsSection(id, ann.annotations || []),
		exportSection(id));
}

function rangeFilters(params) {
	const toDate = (t) => (t ? new Date(t * 1000).toISOString().slice(0, 10) : '');
	const fromDate = (s) => (s ? Math.floor(Date.parse(s + 'T00:00:00Z') / 1000) : '');
	const since = h('input', { type: 'date', id: 'f-since', value: toDate(params.get('since')) });
	const until = h('input', { type: 'date', id: 'f-until', value: toDate(params.get('until')) });
	return h('form', {
		class: 'filters', onsubmit: (ev) => {
			ev.preventDefault();
			updateParams({ since: fromDate(since.value), until: fromDate(until.value) });
		},
	}, h('label', {}, 'Since', since), h('label', {}, 'Until', until), h('button', { type: 'submit' }, 'Apply'));
}

function annotationsSection(id, list) {
	const isAdmin = !!me && me.role === 'admin'; // the API refuses the rest anyway
	const box = h('div', { id: 'annotations' });
	const err = h('p', { class: 'error', role: 'alert' });
	function paint(items) {
		box.replaceChildren(...(items.length ? items.map((a) => h('div', { class: 'annotation' },
			h('div', {}, a.text),
			h('div', { class: 'meta' }, (a.workload ? 'workload ' + a.workload + ' · ' : '') +
				(a.fits ? 'v2 replacement fits: ' + a.fits + ' · ' : '') +
				'by ' + (a.author || '?') + ', ' + fmtTime(a.created)),
			isAdmin ? h('button', {
				class: 'secondary', type: 'button', onclick: async () => {
					try {
						await api('/api/v1/annotations/' + a.id, { method: 'DELETE' });
						await refresh();
					} catch (e) {
						err.textContent = e.message;
					}
				},
			}, 'Delete') : null)) : [h('p', { class: 'muted' }, 'No use case recorded yet.')]));
	}
	async function refresh() {
		const r = await api('/api/v1/annotations?feature=' + encodeURIComponent(id));
		paint(r.annotations || []);
		const pre = document.getElementById('export-text');
		if (pre)
			await loadExport(id, pre);
	}
	paint(list);
	if (!isAdmin)
		return h('section', {}, h('h2', {}, 'Use cases (annotations)'), box,
			h('p', { class: 'muted', id: 'annot-readonly' }, 'Use cases are recorded by admins; this token is a ' +
				(me ? me.role : 'viewer') + ' token.'));
	const text = h('textarea', { id: 'annot-text', required: true, placeholder: 'Why does the fleet depend on this? (e.g. "batch jobs rely on soft limits for reclaim ordering")' });
	const workload = h('input', { id: 'annot-workload', placeholder: 'workload (optional): process or container' });
	const fits = h('select', { id: 'annot-fits' }, h('option', { value: '' }, 'v2 replacement fits? (unknown)'),
		h('option', { value: 'yes' }, 'yes'), h('option', { value: 'partial' }, 'partially'), h('option', { value: 'no' }, 'no'));
	const form = h('form', {
		class: 'annot-form', id: 'annot-form', onsubmit: async (ev) => {
			ev.preventDefault();
			err.textContent = '';
			const body = { feature: id, text: text.value.trim() };
			if (workload.value.trim())
				body.workload = workload.value.trim();
			if (fits.value)
				body.fits = fits.value;
			try {
				await api('/api/v1/annotations', { method: 'POST', body });
				text.value = '';
				workload.value = '';
				await refresh();
			} catch (e) {
				err.textContent = 'Could not save: ' + e.message;
			}
		},
	}, text, workload, fits, h('button', { type: 'submit' }, 'Add use case'), err);
	return h('section', {}, h('h2', {}, 'Use cases (annotations)'), box, form);
}

// loadExport(id, pre): fill pre (the preview element, attached or not)
// with exactly what the export endpoint returns.
async function loadExport(id, pre) {
	const txt = await api('/api/v1/export/linux-mm?feature=' + encodeURIComponent(id), { text: true });
	pre.textContent = txt;
	return txt;
}

function exportSection(id) {
	const pre = h('pre', { class: 'export', id: 'export-text' }, 'Loading the export…');
	const msg = h('span', { class: 'muted', role: 'status' });
	const copy = h('button', {
		type: 'button', onclick: async () => {
			try {
				await navigator.clipboard.writeText(pre.textContent);
				msg.textContent = 'Copied.';
			} catch (e) {
				msg.textContent = 'Copy failed (' + e.message + '): select the text instead.';
			}
		},
	}, 'Copy');
	const dl = h('button', {
		type: 'button', class: 'secondary', onclick: () => {
			const a = h('a', { href: URL.createObjectURL(new Blob([pre.textContent], { type: 'text/plain' })), download: 'twilight-linux-mm-' + id + '.txt' });
			document.body.append(a);
			a.click();
			a.remove();
		},
	}, 'Download');
	const sec = h('section', {}, h('h2', {}, 'linux-mm export preview'),
		h('p', { class: 'muted' }, 'Exactly what GET /api/v1/export/linux-mm returns for this feature. twilight never sends mail: copy it into your mail client.'),
		h('div', { class: 'pager' }, copy, dl, msg), pre);
	loadExport(id, pre).catch((e) => {
		pre.textContent = '';
		pre.replaceWith(banner('error', 'Export failed: ' + e.message));
	});
	return sec;
}

async function pageHosts(seq) {
	const { params } = currentRoute();
	setMain(h('h1', {}, 'Hosts'), banner('loading', 'Loading hosts…'));
	const q = new URLSearchParams();
	for (const k of ['host', 'kernel', 'cgroup_mode', 'feature', 'since', 'until', 'cursor', 'limit'])
		if (params.get(k))
			q.set(k, params.get(k));
	const r = await api('/api/v1/hosts' + (q.toString() ? '?' + q : ''));
	if (seq !== renderSeq)
		return;
	const fHost = h('input', { id: 'f-host', value: params.get('host') || '', placeholder: 'web-* or prefix' });
	const fKernel = h('input', { id: 'f-kernel', value: params.get('kernel') || '', placeholder: '6.1*' });
	const fMode = h('select', { id: 'f-mode' }, ['', 'v1', 'hybrid', 'v2'].map((m) =>
		h('option', { value: m, selected: (params.get('cgroup_mode') || '') === m }, m || 'any')));
	const fFeature = h('select', { id: 'f-feature' }, h('option', { value: '' }, 'any'),
		(catalog ? catalog.features : []).map((f) => h('option', { value: f.id, selected: params.get('feature') === f.id }, f.title)));
	const form = h('form', {
		class: 'filters', onsubmit: (ev) => {
			ev.preventDefault();
			updateParams({ host: fHost.value.trim(), kernel: fKernel.value.trim(), cgroup_mode: fMode.value, feature: fFeature.value, cursor: '' });
		},
	}, h('label', {}, 'Hostname', fHost), h('label', {}, 'Kernel', fKernel), h('label', {}, 'cgroup mode', fMode),
	h('label', {}, 'Uses feature', fFeature), h('button', { type: 'submit' }, 'Filter'));
	const rows = r.hosts || [];
	const pager = h('div', { class: 'pager' });
	if (r.next_cursor)
		pager.append(h('button', { type: 'button', onclick: () => updateParams({ cursor: r.next_cursor }) }, 'Next page'));
	if (params.get('cursor'))
		pager.append(h('button', { type: 'button', class: 'secondary', onclick: () => updateParams({ cursor: '' }) }, 'First page'));
	setMain(h('h1', {}, 'Hosts'), form, table([
		{ key: 'hostname', label: 'Host', text: true, render: (x) => hostLink(x.host_id, x.hostname) },
		{ key: 'kernel', label: 'Kernel', text: true },
		{ key: 'cgroup_mode', label: 'cgroup mode' },
		{ key: 'features', label: 'Features used', num: true, value: (x) => (Array.isArray(x.features) ? x.features.length : x.features) },
		{ key: 'last_seen', label: 'Last report', num: true, render: (x) => fmtAgo(x.last_seen) },
	], rows, { id: 'hosts', empty: 'No host matches these filters.' }), pager);
}

async function pageHost(seq, id) {
	setMain(h('h1', {}, 'Host'), banner('loading', 'Loading host…'));
	const d = await api('/api/v1/hosts/' + encodeURIComponent(id));
	if (seq !== renderSeq)
		return;
	const hh = d.health || {};
	const probes = hh.probes || [];
	const missing = hh.probe_missing || d.probe_missing || [];
	setMain(h('h1', {}, d.hostname || id),
		h('div', { class: 'card' }, h('dl', { class: 'kv', id: 'host-info' },
			h('dt', {}, 'Host id'), h('dd', {}, h('code', {}, d.host_id || id)),
			h('dt', {}, 'Kernel'), h('dd', {}, d.kernel || '–'),
			h('dt', {}, 'cgroup mode'), h('dd', {}, d.cgroup_mode || '–'),
			h('dt', {}, 'Agent'), h('dd', {}, (d.agent_version || '?') + ', catalog ' + (d.catalog_version || '?')),
			h('dt', {}, 'Last report'), h('dd', {}, fmtTime(d.last_seen) + ' (' + fmtAgo(d.last_seen) + ')'))),
		h('h2', {}, 'Features used'),
		table([
			{ key: 'feature_id', label: 'Feature', render: (x) => featureLink(x.feature_id || x.id), value: (x) => featureTitle(x.feature_id || x.id) },
			{ key: 'uses', label: 'Uses', num: true },
			{ key: 'first_used', label: 'First used', num: true, render: (x) => fmtTime(x.first_used) },
			{ key: 'last_used', label: 'Last used', num: true, render: (x) => fmtTime(x.last_used) },
		], d.features || [], { id: 'host-features', empty: 'This host used no deprecated feature.' }),
		h('h2', {}, 'Agent health'),
		h('div', { class: 'card' }, h('dl', { class: 'kv', id: 'host-health' },
			h('dt', {}, 'kmsg records lost'), h('dd', { class: hh.records_lost ? 'error' : '' }, fmtNum(hh.records_lost || 0)),
			h('dt', {}, 'Parse failures'), h('dd', {}, fmtNum(hh.parse_failures || 0)),
			h('dt', {}, 'Map overflows'), h('dd', { class: hh.map_overflows ? 'error' : '' }, fmtNum(hh.map_overflows || 0)),
			h('dt', {}, 'Spool'), h('dd', {}, fmtNum(hh.spool_files || 0) + ' batches, ' + fmtNum(hh.spool_bytes || 0) + ' bytes, ' + fmtNum(hh.spool_dropped || 0) + ' dropped'),
			h('dt', {}, 'Send failures'), h('dd', {}, fmtNum(hh.send_failures || 0) + (hh.last_error ? ' (last: ' + hh.last_error + ')' : '')),
			h('dt', {}, 'Key rejected'), h('dd', { class: hh.key_rejected ? 'error' : '' }, hh.key_rejected ? 'yes' : 'no'),
			h('dt', {}, 'Missing probes'), h('dd', { class: missing.length ? 'error' : '' }, missing.length ? missing.join(', ') : 'none'),
			h('dt', {}, 'Memory'), h('dd', {}, hh.rss_anon_kb ? fmtNum(hh.rss_anon_kb) + ' KiB anonymous, ' + fmtNum(hh.rss_kb) + ' KiB resident' : '–'))),
		probes.length ? table([
			{ key: 'name', label: 'Probe', text: true },
			{ key: 'state', label: 'State' },
			{ key: 'reason', label: 'Reason', text: true },
		], probes, { id: 'probes' }) : h('p', { class: 'muted' }, 'No BPF probe state reported.'),
		(d.unknown && d.unknown.length) ? [h('h2', {}, 'Unrecognised deprecation messages'), table([
			{ key: 'text', label: 'Kernel message (digits as #)', text: true },
			{ key: 'count', label: 'Count', num: true },
		], d.unknown, { id: 'unknown' })] : null);
}

async function pageHealth(seq) {
	setMain(h('h1', {}, 'Agent health'), banner('loading', 'Loading fleet health…'));
	const d = await api('/api/v1/health');
	if (seq !== renderSeq)
		return;
	const part = (key, title, extraCol) => {
		const p = d[key] || { count: 0, hosts: [] };
		const cols = [
			{ key: 'hostname', label: 'Host', text: true, render: (x) => hostLink(x.host_id, x.hostname) },
			{ key: 'last_seen', label: 'Last report', num: true, render: (x) => fmtAgo(x.last_seen) },
		];
		if (extraCol)
			cols.push(extraCol);
		return h('section', { id: 'health-' + key }, h('h2', {}, title + ' (' + fmtNum(p.count) + ')'),
			table(cols, p.hosts || [], { id: 'h-' + key, empty: 'None.' }));
	};
	setMain(h('h1', {}, 'Agent health'),
		h('p', { class: 'muted' }, 'Missing data must never read as "no usage": these agents are silent, lossy or half-blind.'),
		part('silent', 'Silent for more than ' + Math.round((d.silent_after || 0) / 3600) + ' h'),
		part('records_lost', 'Reporting lost kernel log records', { key: 'records_lost', label: 'Records lost', num: true }),
		part('key_rejected', 'Key rejected'),
		part('probe_missing', 'Missing BPF probes', { key: 'probe_missing', label: 'Features', text: true, render: (x) => (Array.isArray(x.probe_missing) ? x.probe_missing.join(', ') : (x.probe_missing || '')) }));
}

// ---- main ----------------------------------------------------------------

async function route() {
	const seq = ++renderSeq;
	if (!sessionStorage.getItem(TOKEN_KEY)) {
		signIn();
		return;
	}
	document.getElementById('nav').hidden = false;
	document.getElementById('signout').hidden = false;
	try {
		if (!catalog)
			await loadCatalog();
		const { path } = currentRoute();
		const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
		if (parts.length === 0)
			await pageOverview(seq);
		else if (parts[0] === 'feature' && parts[1])
			await pageFeature(seq, parts[1]);
		else if (parts[0] === 'hosts')
			await pageHosts(seq);
		else if (parts[0] === 'host' && parts[1])
			await pageHost(seq, parts[1]);
		else if (parts[0] === 'health')
			await pageHealth(seq);
		else
			setMain(h('h1', {}, 'Not found'), h('p', {}, 'No page at ' + path + '. '), h('a', { href: '#/' }, 'Back to the overview'));
	} catch (e) {
		if (seq !== renderSeq)
			return;
		if (e.status === 401) {
			catalog = null;
			signIn(e.message);
			return;
		}
		setMain(banner('error', 'Something went wrong: ' + e.message));
	}
}

document.getElementById('signout').addEventListener('click', () => {
	sessionStorage.removeItem(TOKEN_KEY);
	catalog = null;
	me = null;
	location.hash = '#/';
	route();
});
window.addEventListener('hashchange', route);
route();
