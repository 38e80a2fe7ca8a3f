// Browser test of the dashboard: a real twilight-server on 127.0.0.1 with a
// fresh data directory, seeded through the real enrolment and ingest API with
// known figures, driven by Playwright (playwright-core) in Debian's headless
// Chromium. Figures on the page are asserted against the SEED constants
// below, not only against what the API says.
//
// Environment: TWILIGHT_SERVER_BIN (the twilight-server binary),
// TWILIGHT_SCREENSHOT_DIR (where page screenshots go; default ./screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import net from 'node:net';
import { chromium } from 'playwright-core';

const SERVER = process.env.TWILIGHT_SERVER_BIN;
const SHOTS = process.env.TWILIGHT_SCREENSHOT_DIR || join(process.cwd(), 'screenshots');
const CHROMIUM = process.env.TWILIGHT_CHROMIUM || '/usr/bin/chromium';
const XSS = '<img src=x onerror=alert(1)>';
const now = Math.floor(Date.now() / 1000);
const UNKNOWN_TEXT = 'cgroup#: /sys/fs/cgroup/memory/' + 'system.slice/'.repeat(12) + 'memory.fancy_knob is deprecated ' +
	'and will be removed. Please report your usecase to linux-mm@kvack.org if you depend on this functionality.';

// The seed: four hosts. Figures the overview must show follow from these.
// coverage: what the host's agent says it could see (wire format 2's
// health.controllers and boots, records_lost, probe_missing).
const SEED = [
	{
		name: 'web-1', mode: 'v1', kernel: '6.1.0-twilight',
		coverage: { memory: 'attached', boot_covered: true, probe_missing: ['memcg_v1.swappiness'] },
		usage: [
			{ feature: 'memcg_v1.soft_limit', file: 'memory.soft_limit_in_bytes', comm: 'batchd', cgroup: '/batch/job-1', count: 7, container: '' },
			// it reads its soft limit back: a reader, but not only a reader
			{ feature: 'memcg_v1.soft_limit', file: 'memory.soft_limit_in_bytes', comm: 'batchd', cgroup: '/batch/job-1', count: 2, container: '', op: 'read' },
			{ feature: 'memcg_v1.kmem_tcp_limit', file: 'memory.kmem.tcp.limit_in_bytes', comm: 'dockerd', cgroup: '/docker/abc123', count: 3, container: 'docker:abc123' },
		],
		// A deprecation the catalog does not know, long and with one long
		// unbroken word: it must wrap inside the host page's table.
		unknown: [{ text: UNKNOWN_TEXT, count: 3 }],
	},
	{
		name: 'web-2', mode: 'hybrid', kernel: '6.1.0-twilight', labels: { team: 'payments', env: 'prod' },
		coverage: { memory: 'attached', boot_covered: true, records_lost: 4 },
		usage: [
			// the values written (wire format 2): 256 MiB to 512 MiB, and unlimited
			{ feature: 'memcg_v1.soft_limit', file: 'memory.soft_limit_in_bytes', comm: 'batchd', cgroup: '/batch/job-2', count: 5, container: '',
				value: { last: 536870912, min: 268435456, max: 536870912, unlimited: true, unit: 'bytes', source: 'stored' } },
			// monitoring only (as runc's stats do): a reader, never a user
			{ feature: 'memcg_v1.kmem_tcp_limit', file: 'memory.kmem.tcp.limit_in_bytes', comm: 'runc', cgroup: '', count: 40, container: '', op: 'read' },
		],
	},
	{ name: 'evil-3', mode: 'v1', kernel: '6.1.0-twilight',
		// BPF off: the kernel log only, and it missed this boot's start
		coverage: { memory: 'unavailable', boot_covered: false },
		usage: [
			{ feature: 'memcg_v1.oom_control', file: 'memory.oom_control', comm: XSS, cgroup: '/x', count: 2, container: '', op: 'register_event' },
		],
		// the same unknown deprecation as web-1's: one text, two hosts
		unknown: [{ text: UNKNOWN_TEXT, count: 2 }],
	},
	{ name: 'v2-only', mode: 'v2', kernel: '6.12.0', usage: [] },
];
const expect = {
	total: 4,
	v1: 2,
	hybrid: 1,
	v2: 1,
	soft_limit: { hosts: 2, uses: 12 },
	tcp: { hosts: 1, uses: 3 },
	oom: { hosts: 1, uses: 2 },
	// every host sends coverage facts (a version 1 report: none set)
	coverage: {
		hosts: SEED.length,
		bpf_memory: SEED.filter((x) => x.coverage && x.coverage.memory === 'attached').length,
		kmsg_only: SEED.filter((x) => !x.coverage || x.coverage.memory !== 'attached').length,
		boot_uncovered: SEED.filter((x) => x.coverage && x.coverage.boot_covered === false).length,
		records_lost: SEED.filter((x) => x.coverage && x.coverage.records_lost > 0).length,
		probe_missing: SEED.filter((x) => x.coverage && (x.coverage.probe_missing || []).length > 0).length,
		// every seed host read its kernel log, none overflowed a BPF map
		no_log_source: 0,
		map_overflow: 0,
		unmeasured: 0,
		census_only: 0,
	},
};

// The health members of a seed host's coverage (wire format 2).
function coverageHealth(c, bootId, kernel) {
	if (!c)
		return {};
	return {
		controllers: [{ name: 'memory', state: c.memory, reason: c.memory === 'attached' ? '' : 'bpf = false' },
			{ name: 'cpuset', state: 'unavailable', reason: 'BPF counts memory controller files only' }],
		boots: [{ boot_id: bootId, kernel, first_kmsg_seq: c.boot_covered ? 0 : 4242, first_journal_us: 0, start_covered: c.boot_covered }],
		records_lost: c.records_lost || 0,
		probe_missing: c.probe_missing || [],
	};
}

let srv, dataDir, port, ca, adminToken, browser;

function freePort() {
	return new Promise((resolve, reject) => {
		const s = net.createServer();
		s.listen(0, '127.0.0.1', () => {
			const p = s.address().port;
			s.close(() => resolve(p));
		});
		s.on('error', reject);
	});
}

// request(method, path, token, body): HTTPS to the test server, verifying
// its certificate against the CA it created.
function request(method, path, token, body) {
	return new Promise((resolve, reject) => {
		const data = body === undefined ? undefined : JSON.stringify(body);
		const req = https.request({
			host: '127.0.0.1', port, path, method, ca, servername: 'localhost',
			headers: Object.assign({ Authorization: 'Bearer ' + token },
				data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {}),
		}, (res) => {
			let buf = '';
			res.setEncoding('utf8');
			res.on('data', (c) => (buf += c));
			res.on('end', () => resolve({ status: res.statusCode, body: buf }));
		});
		req.on('error', reject);
		if (data)
			req.write(data);
		req.end();
	});
}

async function waitForServer() {
	for (let i = 0; i < 100; i++) {
		try {
			ca = readFileSync(join(dataDir, 'ca.pem'));
			const r = await request('GET', '/healthz', 'none');
			if (r.status === 200)
				return;
		} catch (e) {
			// not up yet
		}
		await new Promise((r) => setTimeout(r, 200));
	}
	throw new Error('twilight-server did not come up on 127.0.0.1:' + port);
}

function hex(n, seed) {
	let s = '';
	for (let i = 0; s.length < n; i++)
		s += ((seed * 2654435761 + i * 40503) >>> 0).toString(16).padStart(8, '0');
	return s.slice(0, n);
}

before(async () => {
	assert.ok(SERVER, 'TWILIGHT_SERVER_BIN must name the twilight-server binary');
	mkdirSync(SHOTS, { recursive: true });
	dataDir = mkdtempSync(join(tmpdir(), 'twl-browser-'));
	port = await freePort();
	srv = spawn(SERVER, ['--data-dir', dataDir, '--listen', '127.0.0.1:' + port], { stdio: ['ignore', 'inherit', 'inherit'] });
	srv.on('exit', (code, sig) => {
		if (code !== 0 && sig !== 'SIGTERM')
			console.error('twilight-server exited: code ' + code + ' signal ' + sig);
	});
	await waitForServer();
	adminToken = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
	const agentToken = readFileSync(join(dataDir, 'agent.token'), 'utf8').trim();
	// Seed through the real API: enrol each host, post one report each.
	for (let i = 0; i < SEED.length; i++) {
		const hst = SEED[i];
		const hostId = hex(64, i + 1);
		const bootId = hex(32, i + 101);
		const en = await request('POST', '/api/v1/enroll', agentToken, { host_id: hostId, hostname: hst.name });
		assert.ok(en.status === 200 || en.status === 201, 'enrol ' + hst.name + ': ' + en.status + ' ' + en.body);
		const key = JSON.parse(en.body).key;
		const v2 = Boolean(hst.labels || hst.coverage);
		const report = {
			v: v2 ? 2 : 1, batch_id: hex(32, i + 201), seq: 1, sent_time: now,
			host: { host_id: hostId, hostname: hst.name, boot_id: bootId, kernel: hst.kernel, cgroup_mode: hst.mode, agent_version: '0.1.0', catalog_version: 1,
				...(hst.labels ? { labels: hst.labels } : {}) },
			health: { records_lost: 0, parse_failures: 0, probes: [{ name: 'cgroup_file_write', state: 'attached', reason: '' }],
				...coverageHealth(hst.coverage, bootId, hst.kernel) },
			unknown: (hst.unknown || []).map((u, k) => ({
				text: u.text, kmsg_seq: 10 + k, mono_us: 1000000, time: now - 600, count: u.count, origin: 'kmsg',
			})),
			usage: hst.usage.map((u) => ({
				boot_id: bootId, feature: u.feature, file: u.file, op: u.op || 'write', cgroup: u.cgroup,
				comm: u.comm, uid: 0, writer_cgroup: u.cgroup, container: u.container, last_pid: 100 + i,
				...(v2 ? { use: { write: 'configures', register_event: 'listens', read: 'reads' }[u.op || 'write'] } : {}),
				count: u.count, failed: 0, condition_met: u.count, first_seen: now - 3600, last_seen: now - 60,
				...(u.value ? { value: u.value } : {}),
			})),
		};
		const r = await request('POST', '/api/v1/reports', key, report);
		assert.equal(r.status, 200, 'ingest ' + hst.name + ': ' + r.body);
	}
	browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
			'--disable-component-update', '--disable-sync'],
	});
});

after(async () => {
	if (browser)
		await browser.close();
	if (srv)
		srv.kill('SIGTERM');
	if (dataDir)
		rmSync(dataDir, { recursive: true, force: true });
});

async function signedInPage(token = adminToken) {
	// The server's certificate is issued by the CA it made in dataDir; the
	// browser has no way to trust it here, so certificate errors are ignored
	// for this one origin (127.0.0.1) only.
	const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1366, height: 900 } });
	const page = await ctx.newPage();
	const problems = [];
	page.on('dialog', (d) => {
		problems.push('dialog: ' + d.message());
		d.dismiss();
	});
	page.on('pageerror', (e) => problems.push('page error: ' + e.message));
	page.on('response', (r) => {
		if (r.status() >= 400)
			problems.push('HTTP ' + r.status() + ' for ' + r.url());
	});
	page.on('console', (m) => {
		if (m.type() === 'error')
			problems.push('console: ' + m.text());
	});
	await page.goto('https://127.0.0.1:' + port + '/');
	await page.fill('#token', token);
	await page.click('#signin-form button[type=submit]');
	await page.waitForSelector('#overview-stats');
	return { page, ctx, problems };
}

function num(s) {
	return Number(String(s).replace(/[^0-9.]/g, ''));
}

// strayText(page): text in main that is a JavaScript value printed by
// mistake ("null", "undefined", "NaN", "[object ...]") instead of content.
function strayText(page) {
	return page.evaluate(() => {
		const bad = [];
		const walk = document.createTreeWalker(document.getElementById('main'), NodeFilter.SHOW_TEXT);
		for (let n = walk.nextNode(); n; n = walk.nextNode())
			if (/^(null|undefined|NaN)$/.test(n.data.trim()) || n.data.includes('[object '))
				bad.push(JSON.stringify(n.data) + ' in <' + n.parentNode.nodeName.toLowerCase() + '>');
		return bad;
	});
}

test('sign in and the overview shows the seeded figures', async () => {
	const { page, ctx, problems } = await signedInPage();
	assert.equal(num(await page.textContent('#stat-hosts-total .n')), expect.total);
	assert.equal(num(await page.textContent('#stat-mode-v1 .n')), expect.v1);
	assert.equal(num(await page.textContent('#stat-mode-hybrid .n')), expect.hybrid);
	assert.equal(num(await page.textContent('#stat-mode-v2 .n')), expect.v2);
	const row = async (title) => {
		const cells = await page.$$eval('#table-features tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
		return cells.find((c) => c[0] === title);
	};
	const catalog = JSON.parse((await request('GET', '/api/v1/catalog', adminToken)).body);
	const title = (id) => catalog.features.find((f) => f.id === id).title;
	const soft = await row(title('memcg_v1.soft_limit'));
	assert.ok(soft, 'soft limit row on the overview');
	// columns: feature, status, 1d, 7d, 30d, share, uses, workloads, replacement
	assert.equal(num(soft[4]), expect.soft_limit.hosts);
	assert.equal(num(soft[6]), expect.soft_limit.uses);
	assert.equal(soft[5], Math.round(100 * expect.soft_limit.hosts / (expect.v1 + expect.hybrid)) + '%');
	const tcp = await row(title('memcg_v1.kmem_tcp_limit'));
	assert.equal(num(tcp[4]), expect.tcp.hosts);
	assert.equal(num(tcp[6]), expect.tcp.uses);
	const oom = await row(title('memcg_v1.oom_control'));
	assert.equal(num(oom[6]), expect.oom.uses);
	// No use case is recorded yet: every feature in use needs one.
	const needs = await page.$$eval('#table-needs-usecase tbody tr td:first-child', (tds) => tds.map((t) => t.textContent).sort());
	assert.deepEqual(needs, ['memcg_v1.soft_limit', 'memcg_v1.kmem_tcp_limit', 'memcg_v1.oom_control'].map(title).sort());
	// Sorting by uses (descending on first click) puts soft limit first.
	await page.click('#table-features th[data-key=uses]');
	const first = await page.$eval('#table-features tbody tr td', (td) => td.textContent);
	assert.equal(first, title('memcg_v1.soft_limit'));
	assert.match(page.url(), /sort_features=uses%3Adesc|sort_features=uses:desc/);
	await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });
	assert.deepEqual(await strayText(page), []);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the overview says what the counts could see, and which features nobody could have seen', async () => {
	const { page, ctx, problems } = await signedInPage();
	const c = expect.coverage;
	// The seed's figures, and the API's: the page shows the same.
	const sum = JSON.parse((await request('GET', '/api/v1/summary', adminToken)).body);
	assert.deepEqual(sum.coverage, c);
	const shown = {}, panel = {};
	for (const [id, key] of [['hosts', 'hosts'], ['bpf', 'bpf_memory'], ['kmsg', 'kmsg_only'], ['boot', 'boot_uncovered'],
		['lost', 'records_lost'], ['probe', 'probe_missing']])
	{
		shown[key] = num(await page.textContent('#stat-cov-' + id + ' .n'));
		panel[key] = c[key];
	}
	assert.deepEqual(shown, panel);
	assert.deepEqual(Object.values(panel), [4, 2, 2, 1, 1, 1], 'the seed covers every count the panel shows');
	const catalog = JSON.parse((await request('GET', '/api/v1/catalog', adminToken)).body);
	const title = (id) => catalog.features.find((f) => f.id === id).title;
	const unused = Object.fromEntries(await page.$$eval('#table-unused tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[2].textContent])));
	// BPF on the memory controller (web-1, web-2): a memory knob nobody
	// wrote was not seen; a freezer or cpuset feature, or the swapaccount
	// boot parameter, with no kernel warning, was not measured.
	assert.equal(unused[title('memcg_v1.swappiness')], 'not seen');
	assert.equal(unused[title('memcg_v1.force_empty')], 'not seen');
	assert.equal(unused[title('cgroup_v1.freezer')], 'not measured');
	assert.equal(unused[title('cgroup_v1.cpuset_sched_load_balance')], 'not measured');
	assert.equal(unused[title('memcg_v1.swapaccount')], 'not measured');
	// Every row as the server decides it, nothing decided in the page.
	for (const f of sum.features.filter((x) => !(x.hosts_30d > 0)))
		assert.equal(unused[title(f.id)], f.measured ? 'not seen' : 'not measured', f.id);
	assert.equal(await page.$$eval('#table-unused .not-measured', (e) => e.length),
		sum.features.filter((x) => !(x.hosts_30d > 0) && !x.measured).length);
	await page.screenshot({ path: join(SHOTS, 'overview-coverage.png'), fullPage: true });
	assert.deepEqual(await strayText(page), []);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('a table downloads its rows as CSV, in the order shown, formulas kept as text', async () => {
	const { page, ctx, problems } = await signedInPage();
	await page.click('#table-features th[data-key=uses]');
	const shown = await page.$$eval('#table-features tbody tr', (trs) => trs.map((tr) => tr.cells[0].textContent));
	const heads = await page.$$eval('#table-features thead th', (ths) => ths.map((th) => th.textContent));
	const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#csv-features')]);
	assert.equal(dl.suggestedFilename(), 'twilight-features.csv');
	const text = readFileSync(await dl.path(), 'utf8');
	assert.ok(text.endsWith('\r\n'), 'CRLF line ends');
	const lines = text.slice(0, -2).split('\r\n');
	assert.equal(lines.length, 1 + shown.length, 'a header and a line per row shown');
	assert.equal(lines[0], heads.map((x) => (/[",]/.test(x) ? '"' + x.replace(/"/g, '""') + '"' : x)).join(','));
	// The first field of each line is the row's feature title, in the order shown.
	const firstField = (l) => (l.startsWith('"') ? l.slice(1).split('",')[0].replace(/""/g, '"') : l.split(',')[0]);
	assert.deepEqual(lines.slice(1).map(firstField), shown);
	// The CSV builder itself, on hostile strings (as the page loads it).
	const out = await page.evaluate(async () => (await import('/js/csv.js')).csvText(
		[{ label: 'a', key: 'a' }, { label: 'b', key: 'b' }],
		[{ a: '=cmd|x', b: 'say "hi", bye\n' }, { a: -3, b: null }]));
	assert.equal(out, "a,b\r\n'=cmd|x,\"say \"\"hi\"\", bye\n\"\r\n-3,\r\n");
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the readiness page answers for the target chosen from the list', async () => {
	const { page, ctx, problems } = await signedInPage();
	const want = async (name) => JSON.parse((await request('GET', '/api/v1/readiness?target=' + name, adminToken)).body);
	const d = await want('debian-12-6.12');
	// The seed: web-1 (v1) and web-2 (hybrid) write soft limits, evil-3 (v1)
	// listens on oom_control; v2-only is ready; no host is kernel-log only.
	assert.equal(d.breaks.count, 3);
	assert.equal(d.ready.count, 1);
	await page.goto('https://127.0.0.1:' + port + '/#/readiness?target=debian-12-6.12');
	await page.waitForSelector('#readiness-stats');
	assert.equal(num(await page.textContent('#stat-breaks .n')), d.breaks.count);
	assert.equal(num(await page.textContent('#stat-ready .n')), d.ready.count);
	assert.equal(num(await page.textContent('#stat-not-measured .n')), d.not_measured.count);
	const rows = await page.$$eval('#table-breaks tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
	assert.equal(rows.length, d.breaks.features.length);
	const catalog = JSON.parse((await request('GET', '/api/v1/catalog', adminToken)).body);
	const title = (id) => catalog.features.find((f) => f.id === id).title;
	const soft = rows.find((r) => r[0] === title('memcg_v1.soft_limit'));
	assert.ok(soft, 'soft limit breaks');
	// columns: feature, hosts, configure, listen, read only, ...; web-1
	// reads its soft limit back, and is no reader only for that
	assert.equal(d.breaks.features.find((f) => f.id === 'memcg_v1.soft_limit').by_kind.reads, 1);
	assert.deepEqual(soft.slice(1, 5).map(num), [2, 2, 0, 0]);
	const oom = rows.find((r) => r[0] === title('memcg_v1.oom_control'));
	assert.deepEqual(oom.slice(1, 5).map(num), [1, 0, 1, 0]);
	// web-1 writes the TCP limit, web-2 only reads it (by_kind.reading_only)
	const tcp = rows.find((r) => r[0] === title('memcg_v1.kmem_tcp_limit'));
	assert.deepEqual(tcp.slice(1, 5).map(num), [2, 1, 0, 1]);
	const hostNames = await page.$$eval('#table-break-hosts tbody tr td:first-child', (tds) => tds.map((td) => td.textContent).sort());
	assert.deepEqual(hostNames, d.breaks.hosts.map((x) => x.hostname).sort());
	// Another target from the list: the URL and the figures follow.
	await page.selectOption('#f-target', 'upstream-6.15');
	await page.click('#readiness-stats ~ form button, form.filters button');
	await page.waitForFunction(() => location.hash.includes('target=upstream-6.15'));
	const u = await want('upstream-6.15');
	await page.waitForFunction((n) => document.querySelector('#stat-breaks .n') &&
		Number(document.querySelector('#stat-breaks .n').textContent.replace(/[^0-9]/g, '')) === n, u.breaks.count);
	await page.screenshot({ path: join(SHOTS, 'readiness.png'), fullPage: true });
	assert.deepEqual(await strayText(page), [], 'readiness page');
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the readiness page groups hosts by an operator label', async () => {
	const { page, ctx, problems } = await signedInPage();
	const api = JSON.parse((await request('GET', '/api/v1/readiness?target=debian-12-6.12&group=label:team', adminToken)).body);
	// The seed: web-2 (team=payments) breaks; of the three without the
	// label, web-1 and evil-3 break and v2-only is ready.
	const want = [['(no team label)', 3, 2, 1, 0], ['payments', 1, 1, 0, 0]];
	assert.deepEqual(api.groups.values.map((g) => [g.value === null ? '(no team label)' : g.value, g.hosts, g.breaks, g.ready, g.not_measured]), want);
	await page.goto('https://127.0.0.1:' + port + '/#/readiness?target=debian-12-6.12');
	await page.waitForSelector('#readiness-stats');
	assert.equal(await page.$('#table-groups'), null, 'no grouping until asked');
	await page.fill('#f-group', 'team');
	await page.click('form.filters button[type=submit]');
	await page.waitForFunction(() => location.hash.includes('group=team'));
	await page.waitForSelector('#table-groups');
	const rows = await page.$$eval('#table-groups tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
	assert.deepEqual(rows.map((r) => [r[0], ...r.slice(1).map(num)]), want);
	assert.deepEqual(await strayText(page), [], 'readiness page grouped');
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the readiness page counts only the hosts carrying the label chosen', async () => {
	const { page, ctx, problems } = await signedInPage();
	const want = async (q) => JSON.parse((await request('GET', '/api/v1/readiness?' + q, adminToken)).body);
	const all = await want('target=upstream-6.15');
	const only = await want('target=upstream-6.15&label=team%3Dpayments');
	// The seed: of the hosts that break, only web-2 carries team=payments.
	assert.equal(only.label, 'team=payments');
	assert.equal(only.breaks.count, 1);
	assert.ok(all.breaks.count > only.breaks.count, 'the filter narrows the answer');
	await page.goto('https://127.0.0.1:' + port + '/#/readiness');
	await page.waitForSelector('#readiness-stats');
	await page.selectOption('#f-target', 'upstream-6.15');
	await page.fill('#f-label', 'team=payments');
	await page.click('form.filters button[type=submit]');
	await page.waitForFunction(() => location.hash.includes('target=upstream-6.15') &&
		(location.hash.includes('label=team%3Dpayments') || location.hash.includes('label=team=payments')));
	await page.waitForSelector('#readiness-label');
	assert.equal(num(await page.textContent('#stat-breaks .n')), only.breaks.count);
	assert.equal(num(await page.textContent('#stat-ready .n')), only.ready.count);
	assert.equal(num(await page.textContent('#stat-not-measured .n')), only.not_measured.count);
	const hostNames = await page.$$eval('#table-break-hosts tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
	assert.deepEqual(hostNames, ['web-2']);
	await page.screenshot({ path: join(SHOTS, 'readiness-label.png'), fullPage: true });
	assert.deepEqual(await strayText(page), [], 'readiness page filtered by label');
	// A bad filter is refused by the API, not answered with all hosts.
	assert.equal((await request('GET', '/api/v1/readiness?target=upstream-6.15&label=team', adminToken)).status, 400);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the hosts page filters by an operator label, and a host shows its labels', async () => {
	const { page, ctx, problems } = await signedInPage();
	await page.goto('https://127.0.0.1:' + port + '/#/hosts');
	await page.waitForSelector('#table-hosts');
	await page.fill('#f-label', 'team=payments');
	await page.click('form.filters button[type=submit]');
	await page.waitForFunction(() => location.hash.includes('label=team%3Dpayments') || location.hash.includes('label=team=payments'));
	await page.waitForFunction(() => document.querySelectorAll('#table-hosts tbody tr').length === 1 &&
		document.querySelector('#table-hosts tbody tr td').textContent === 'web-2');
	await page.click('#table-hosts tbody tr td a');
	await page.waitForSelector('#host-labels a');
	assert.deepEqual(await page.$$eval('#host-labels a', (as) => as.map((a) => a.textContent)), ['env=prod', 'team=payments']);
	// A bad filter is refused with the API's reason, not an empty list.
	const bad = await request('GET', '/api/v1/hosts?label=Team', adminToken);
	assert.equal(bad.status, 400);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the health and unknown pages filter by an operator label', async () => {
	const { page, ctx, problems } = await signedInPage();
	// The seed's agents all send catalog version 1; web-2 alone is team=payments.
	const all = JSON.parse((await request('GET', '/api/v1/health', adminToken)).body);
	const only = JSON.parse((await request('GET', '/api/v1/health?label=team%3Dpayments', adminToken)).body);
	assert.ok(all.catalog.version > 1, 'the server catalog is newer than the seed agents\'');
	assert.equal(all.catalog.older.count, expect.total);
	assert.equal(only.catalog.older.count, 1);
	await page.goto('https://127.0.0.1:' + port + '/#/health');
	await page.waitForSelector('#health-catalog_older');
	await page.fill('#f-label', 'team=payments');
	await page.click('form.filters button[type=submit]');
	await page.waitForFunction(() => location.hash.includes('label=team%3Dpayments') || location.hash.includes('label=team=payments'));
	await page.waitForFunction(() => document.querySelectorAll('#table-h-catalog_older tbody tr').length === 1 &&
		document.querySelector('#table-h-catalog_older tbody tr td').textContent === 'web-2');
	assert.match(await page.$eval('#health-catalog_older h2', (e) => e.textContent), /\(1\)$/);
	assert.equal(await page.$eval('#f-label', (e) => e.value), 'team=payments');
	await page.screenshot({ path: join(SHOTS, 'health-label.png'), fullPage: true });
	// web-1's unknown text is not web-2's: the labelled list is empty.
	await page.goto('https://127.0.0.1:' + port + '/#/unknown?label=team%3Dpayments');
	await page.waitForSelector('#table-unknown');
	assert.equal(await page.$eval('#f-label', (e) => e.value), 'team=payments');
	const unk = JSON.parse((await request('GET', '/api/v1/unknown?label=team%3Dpayments', adminToken)).body);
	assert.equal(unk.texts.length, 0);
	assert.ok(!(await page.$eval('#table-unknown', (e) => e.textContent)).includes('memory.fancy_knob'), 'no unlabelled host\'s text');
	assert.equal((await request('GET', '/api/v1/health?label=team', adminToken)).status, 400);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the unknown deprecations page lists the fleet\'s unrecognised messages', async () => {
	const { page, ctx, problems } = await signedInPage();
	const d = JSON.parse((await request('GET', '/api/v1/unknown', adminToken)).body);
	assert.ok(d.texts.length >= 1, 'the seed sends an unknown text');
	// web-1 and evil-3 sent the same text: one row, two hosts, 3 + 2 times
	const shared = d.texts.find((x) => x.text === UNKNOWN_TEXT);
	assert.ok(shared, 'the seed\'s unknown text is grouped: ' + JSON.stringify(d.texts));
	assert.deepEqual([shared.hosts, shared.count], [2, 5]);
	await page.goto('https://127.0.0.1:' + port + '/#/unknown');
	await page.waitForSelector('#table-unknown');
	const rows = await page.$$eval('#table-unknown tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
	assert.equal(rows.length, d.texts.length);
	const mine = rows.find((r) => r[0] === d.texts[0].text);
	assert.ok(mine, 'the API\'s first text is on the page');
	assert.equal(num(mine[1]), d.texts[0].hosts);
	assert.equal(num(mine[2]), d.texts[0].count);
	const two = rows.find((r) => r[0] === UNKNOWN_TEXT);
	assert.deepEqual([num(two[1]), num(two[2])], [2, 5]);
	assert.deepEqual(await strayText(page), [], 'unknown page');
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('feature page, annotation editor and export preview', async () => {
	const { page, ctx, problems } = await signedInPage();
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit');
	await page.waitForSelector('#feature-uses');
	assert.equal(num(await page.textContent('#feature-uses')), expect.soft_limit.uses);
	assert.equal(num(await page.textContent('#feature-hosts')), expect.soft_limit.hosts);
	// The kinds of use, apart: both seed hosts write soft limits; none listens or only reads.
	assert.equal(num(await page.textContent('#feature-configuring')), expect.soft_limit.hosts);
	assert.equal(num(await page.textContent('#feature-listening')), 0);
	assert.match(await page.textContent('#feature-reading'), /^0 /);
	const procs = await page.$$eval('#table-processes tbody tr td:first-child', (tds) => tds.map((t) => t.textContent));
	assert.ok(procs.includes('batchd'), 'process batchd listed: ' + procs);
	// The values web-2 wrote, in words: one host, one cgroup, one process.
	assert.deepEqual(await page.$$eval('#feature-values li', (lis) => lis.map((li) => li.textContent)),
		['soft_limit_in_bytes set on 1 cgroup on 1 host: 256 MiB-512 MiB; reset to unlimited by 1 process']);
	await page.waitForFunction(() => document.getElementById('export-text') &&
		document.getElementById('export-text').textContent.includes('linux-mm@kvack.org'));
	const note = 'Nightly batch jobs rely on soft limits for reclaim ordering (browser test)';
	await page.fill('#annot-text', note);
	await page.fill('#annot-workload', 'batchd');
	await page.click('#annot-form button[type=submit]');
	await page.waitForFunction((t) => document.getElementById('annotations').textContent.includes(t), note);
	// The export wraps at 72 columns: compare with white space collapsed.
	await page.waitForFunction((t) => document.getElementById('export-text').textContent.replace(/\s+/g, ' ').includes(t), note);
	// The preview is exactly what the export endpoint returns.
	const shown = await page.textContent('#export-text');
	const api = await request('GET', '/api/v1/export/linux-mm?feature=memcg_v1.soft_limit', adminToken);
	assert.equal(api.status, 200);
	assert.equal(shown, api.body);
	// Both downloads carry the token: the text as shown, the CSV as the
	// export endpoint returns it.
	const saved = async (sel) => {
		const [dl] = await Promise.all([page.waitForEvent('download'), page.click(sel)]);
		return { name: dl.suggestedFilename(), body: readFileSync(await dl.path(), 'utf8') };
	};
	assert.deepEqual(await saved('#export-text-download'), { name: 'twilight-linux-mm-memcg_v1.soft_limit.txt', body: shown });
	const csv = await request('GET', '/api/v1/export/linux-mm?feature=memcg_v1.soft_limit&format=csv', adminToken);
	assert.equal(csv.status, 200);
	assert.match(csv.body, /^feature,title,/);
	assert.deepEqual(await saved('#export-csv'), { name: 'twilight-linux-mm-memcg_v1.soft_limit.csv', body: csv.body });
	// The export withholds the values unless the server shows them.
	assert.match(shown, /\n {2}Values written: values withheld \(export-show-values\)\n/);
	assert.doesNotMatch(shown, /512 MiB/);
	await page.screenshot({ path: join(SHOTS, 'feature.png'), fullPage: true });
	assert.deepEqual(await strayText(page), []);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the export preview counts only the hosts carrying the label chosen', async () => {
	const { page, ctx, problems } = await signedInPage();
	const q = 'feature=memcg_v1.soft_limit&label=team%3Dpayments';
	const only = await request('GET', '/api/v1/export/linux-mm?' + q, adminToken);
	const all = await request('GET', '/api/v1/export/linux-mm?feature=memcg_v1.soft_limit', adminToken);
	assert.equal(only.status, 200);
	// Of the seed's soft limit users, web-2 alone is team=payments.
	assert.match(only.body, /Only a part of our fleet is counted here/);
	assert.notEqual(only.body, all.body);
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit');
	await page.waitForFunction((t) => document.getElementById('export-text') &&
		document.getElementById('export-text').textContent === t, all.body);
	await page.fill('#f-export-label', 'team=payments');
	await page.click('#export-label-form button[type=submit]');
	await page.waitForFunction(() => location.hash.includes('label=team%3Dpayments') || location.hash.includes('label=team=payments'));
	// The preview is exactly what the export endpoint returns for the label.
	await page.waitForFunction((t) => document.getElementById('export-text') &&
		document.getElementById('export-text').textContent === t, only.body);
	assert.equal(await page.$eval('#f-export-label', (e) => e.value), 'team=payments');
	// The feature's own figures are the labelled hosts' too (web-2 alone),
	// without the fleet's daily charts.
	assert.equal(num(await page.textContent('#feature-hosts')), 1);
	await page.waitForSelector('#feature-timeline');
	const csv = await request('GET', '/api/v1/export/linux-mm?' + q + '&format=csv', adminToken);
	assert.equal(csv.status, 200);
	const allCsv = await request('GET', '/api/v1/export/linux-mm?feature=memcg_v1.soft_limit&format=csv', adminToken);
	assert.notEqual(csv.body, allCsv.body, 'the labelled CSV is not the whole fleet\'s');
	const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
	assert.equal(readFileSync(await dl.path(), 'utf8'), csv.body);
	await page.screenshot({ path: join(SHOTS, 'export-label.png'), fullPage: true });
	assert.deepEqual(await strayText(page), [], 'export preview filtered by label');
	// A malformed label is refused with the API's reason (the feature
	// detail's, which the page asks first), nothing shown of the whole fleet.
	await page.fill('#f-export-label', 'team');
	await page.click('#export-label-form button[type=submit]');
	await page.waitForSelector('.banner.error');
	assert.match(await page.textContent('.banner.error'), /\(field label\)/);
	assert.equal(await page.$('#export-text'), null, 'no preview of the whole fleet');
	expectedRefusal(problems, '/api/v1/features/memcg_v1.soft_limit?label=team');
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('a viewer token sees use cases but no editor, and no request is refused', async () => {
	const made = await request('POST', '/api/v1/tokens', adminToken, { name: 'sre-viewer', role: 'viewer' });
	assert.equal(made.status, 201);
	const viewer = JSON.parse(made.body).token;
	const { page, ctx, problems } = await signedInPage(viewer);
	assert.equal(await page.textContent('#who'), 'signed in as sre-viewer (viewer)');
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit');
	await page.waitForSelector('#annot-readonly');
	assert.equal(await page.$('#annot-form'), null, 'no annotation form for a viewer');
	assert.equal(await page.$$eval('#annotations button', (b) => b.length), 0, 'no delete buttons for a viewer');
	// the use case recorded by the admin test above is still shown
	assert.match(await page.textContent('#annotations'), /reclaim ordering/);
	// a 403 would have been recorded as a problem: the page asks only what a viewer may
	assert.deepEqual(problems, []);
	await ctx.close();
});

// expectedRefusal(problems, path): drop the one 400 the test provoked on
// path (the response and the browser's console line about it), and fail
// when there was none.
function expectedRefusal(problems, path) {
	const mine = (p) => p === 'HTTP 400 for https://127.0.0.1:' + port + path ||
		(p.startsWith('console: Failed to load resource') && p.includes(' 400'));
	assert.ok(problems.some(mine), 'a 400 for ' + path + ' was provoked');
	problems.splice(0, problems.length, ...problems.filter((p) => !mine(p)));
}

test('structured use case on the feature page, grouped in the export; the overview stops asking for it', async () => {
	const { page, ctx, problems } = await signedInPage();
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.kmem_tcp_limit');
	await page.waitForSelector('#annot-form');
	await page.fill('#annot-text', 'Docker sets a TCP buffer limit per container (browser test)');
	await page.selectOption('#annot-intent', 'accidental');
	await page.fill('#annot-set-by', 'dockerd --kernel-memory-tcp');
	await page.selectOption('#annot-v2-tried', 'falls_short');
	await page.fill('#annot-shortfall', 'no per-cgroup TCP limit in v2');
	await page.fill('#annot-team', 'platform');
	await page.click('#annot-form button[type=submit]');
	await page.waitForSelector('#annotations .usecase-fields');
	assert.equal(await page.textContent('#annotations .usecase-fields'),
		'accidental (a default nobody chose) · set by dockerd --kernel-memory-tcp · v2 tried: falls short (no per-cgroup TCP limit in v2) · team platform');
	const stored = JSON.parse((await request('GET', '/api/v1/annotations?feature=memcg_v1.kmem_tcp_limit', adminToken)).body).annotations;
	assert.deepEqual([stored[0].intent, stored[0].set_by, stored[0].v2_tried, stored[0].shortfall, stored[0].team],
		['accidental', 'dockerd --kernel-memory-tcp', 'falls_short', 'no per-cgroup TCP limit in v2', 'platform']);
	await page.waitForFunction(() => document.getElementById('export-text').textContent.includes('Use cases, by intent and what sets them:'));
	// The CSV the page downloads is the API's, byte for byte, and carries
	// the structured fields (teams withheld by default).
	const csv = await request('GET', '/api/v1/export/linux-mm?feature=memcg_v1.kmem_tcp_limit&format=csv', adminToken);
	assert.equal(csv.status, 200);
	const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
	assert.equal(readFileSync(await dl.path(), 'utf8'), csv.body);
	const [head, row] = csv.body.split('\r\n');
	const cell = Object.fromEntries(head.split(',').map((k, i) => [k, row.match(/("([^"]|"")*"|[^,]*)(,|$)/g)[i].replace(/,$/, '')]));
	assert.deepEqual([cell.use_cases_intentional, cell.use_cases_accidental, cell.set_by, cell.v2_not_tried, cell.v2_works,
		cell.v2_falls_short, cell.v2_shortfalls, cell.teams],
	['0', '1', '"dockerd --kernel-memory-tcp (1)"', '0', '0', '1', '"no per-cgroup TCP limit in v2"', '""']);
	// A field the API refuses shows its reason and stores nothing.
	await page.fill('#annot-text', 'refused');
	await page.selectOption('#annot-v2-tried', 'works');
	await page.fill('#annot-shortfall', 'x');
	await page.click('#annot-form button[type=submit]');
	await page.waitForFunction(() => document.querySelector('#annot-form .error').textContent.includes('falls_short'));
	expectedRefusal(problems, '/api/v1/annotations');
	assert.equal(JSON.parse((await request('GET', '/api/v1/annotations?feature=memcg_v1.kmem_tcp_limit', adminToken)).body).annotations.length, 1);
	// The overview: soft limit (browser test above) and TCP have use cases now, oom_control has none.
	const catalog = JSON.parse((await request('GET', '/api/v1/catalog', adminToken)).body);
	await page.goto('https://127.0.0.1:' + port + '/#/');
	await page.waitForSelector('#table-needs-usecase');
	const needs = await page.$$eval('#table-needs-usecase tbody tr td:first-child', (tds) => tds.map((t) => t.textContent));
	assert.deepEqual(needs, [catalog.features.find((f) => f.id === 'memcg_v1.oom_control').title]);
	assert.deepEqual(await strayText(page), []);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('migration status: set on the feature page, flagged when used again, shown in readiness', async () => {
	const { page, ctx, problems } = await signedInPage();
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit');
	await page.waitForSelector('#mig-form');
	assert.match(await page.textContent('#migration'), /No migration status set/);
	// batchd wrote soft limits a minute ago on web-1 and web-2: marked
	// migrated since 2020, it is seen using the feature again.
	await page.fill('#mig-workload', 'batchd');
	await page.selectOption('#mig-status', 'migrated');
	await page.fill('#mig-owner', 'team-batch');
	await page.fill('#mig-date', '2020-01-01');
	await page.click('#mig-form button[type=submit]');
	await page.waitForSelector('#table-migration-status tbody tr td.text');
	const row = await page.$$eval('#table-migration-status tbody tr', (trs) => [...trs[0].cells].map((c) => c.textContent));
	assert.equal(row[0], 'batchd');
	assert.equal(row[1], 'migrated · owner team-batch · since 2020-01-01');
	assert.match(row[2], /^used again on 2 hosts, last /);
	const reuse = JSON.parse((await request('GET', '/api/v1/migration-reuse', adminToken)).body).reused;
	assert.deepEqual(reuse.map((x) => [x.feature, x.workload, x.hosts]), [['memcg_v1.soft_limit', 'batchd', 2]]);
	// Blocked needs a reason: the API's refusal is shown, nothing changes.
	await page.fill('#mig-workload', 'batchd');
	await page.selectOption('#mig-status', 'blocked');
	await page.click('#mig-form button[type=submit]');
	await page.waitForFunction(() => document.querySelector('#mig-form .error').textContent.includes('reason'));
	expectedRefusal(problems, '/api/v1/migration-status');
	// The whole feature: accepted risk, set through the API.
	const set = await request('POST', '/api/v1/migration-status', adminToken,
		{ feature: 'memcg_v1.soft_limit', status: 'accepted_risk', owner: 'sre', date: '2026-01-15' });
	assert.equal(set.status, 200, set.body);
	await page.goto('https://127.0.0.1:' + port + '/#/readiness?target=debian-12-6.12');
	await page.waitForSelector('#table-break-workloads');
	const cells = async (sel) => page.$$eval(sel + ' tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
	const wl = (await cells('#table-break-workloads')).find((r) => r[1] === 'batchd');
	assert.ok(wl, 'batchd is a workload that breaks');
	assert.equal(wl[wl.length - 1], 'migrated · owner team-batch · since 2020-01-01');
	const catalog = JSON.parse((await request('GET', '/api/v1/catalog', adminToken)).body);
	const soft = (await cells('#table-breaks')).find((r) => r[0] === catalog.features.find((f) => f.id === 'memcg_v1.soft_limit').title);
	assert.equal(soft[soft.length - 1], 'accepted risk · owner sre · since 2026-01-15');
	await page.screenshot({ path: join(SHOTS, 'readiness-migration.png'), fullPage: true });
	assert.deepEqual(await strayText(page), []);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('hostile process name renders as text and runs no script', async () => {
	const { page, ctx, problems } = await signedInPage();
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.oom_control');
	await page.waitForSelector('#table-processes');
	const procs = await page.$$eval('#table-processes tbody tr td:first-child', (tds) => tds.map((t) => t.textContent));
	assert.ok(procs.includes(XSS), 'the hostile name is shown as text: ' + JSON.stringify(procs));
	// Its registration is a listener; no value was written.
	assert.deepEqual(await page.$$eval('#feature-values li', (lis) => lis.map((li) => li.textContent)),
		['notification listeners: 1 process on 1 host']);
	assert.equal(await page.$$eval('img', (imgs) => imgs.length), 0, 'no <img> element was created');
	// A limit written by an agent that sent no value: said plainly, no list.
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.kmem_tcp_limit');
	await page.waitForSelector('#feature-values');
	assert.match(await page.textContent('#feature-values'), /^No values recorded in this range/);
	assert.equal(await page.$$eval('#feature-values li', (lis) => lis.length), 0);
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.oom_control');
	await page.waitForSelector('#table-processes');
	await page.screenshot({ path: join(SHOTS, 'hostile.png'), fullPage: true });
	// The host page too.
	const hosts = JSON.parse((await request('GET', '/api/v1/hosts?host=evil-3', adminToken)).body).hosts;
	assert.equal(hosts.length, 1);
	await page.goto('https://127.0.0.1:' + port + '/#/host/' + hosts[0].host_id);
	await page.waitForSelector('#host-info');
	assert.equal(await page.$$eval('img', (imgs) => imgs.length), 0);
	await page.screenshot({ path: join(SHOTS, 'host.png'), fullPage: true });
	assert.deepEqual(await strayText(page), [], 'host page');
	await page.goto('https://127.0.0.1:' + port + '/#/health');
	await page.waitForSelector('#health-silent');
	// Catalog skew: the seed's agents send catalog version 1.
	const hdoc = JSON.parse((await request('GET', '/api/v1/health', adminToken)).body);
	assert.ok(hdoc.catalog.version > 1 ? hdoc.catalog.older.count > 0 : true, 'older agents listed');
	assert.equal(await page.$eval('#health-catalog_older h2', (e) => e.textContent),
		'Agents with an older catalog (server catalog version ' + hdoc.catalog.version + ') (' + hdoc.catalog.older.count + ')');
	assert.equal(await page.$$eval('#table-h-catalog_older tbody tr', (trs) => trs.length), Math.max(hdoc.catalog.older.hosts.length, 1));
	await page.screenshot({ path: join(SHOTS, 'health.png'), fullPage: true });
	assert.deepEqual(await strayText(page), [], 'health page');
	await page.goto('https://127.0.0.1:' + port + '/#/hosts');
	await page.waitForSelector('#table-hosts');
	assert.equal(await page.$$eval('#table-hosts tbody tr', (trs) => trs.length), expect.total);
	await page.screenshot({ path: join(SHOTS, 'hosts.png'), fullPage: true });
	assert.deepEqual(await strayText(page), [], 'hosts page');
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the host page shows configures, listens and reads apart, and the values written there', async () => {
	const { page, ctx, problems } = await signedInPage();
	const rowsOf = async (name) => {
		const hosts = JSON.parse((await request('GET', '/api/v1/hosts?host=' + name, adminToken)).body).hosts;
		assert.equal(hosts.length, 1);
		await page.goto('https://127.0.0.1:' + port + '/#/host/' + hosts[0].host_id);
		await page.waitForSelector('#table-host-features');
		const heads = await page.$$eval('#table-host-features thead th', (ths) => ths.map((t) => t.textContent));
		return (await page.$$eval('#table-host-features tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))))
			.map((cells) => Object.fromEntries(heads.map((hd, i) => [hd, cells[i]])));
	};
	// web-2 writes soft limits (with values) and only reads the TCP limit.
	let rows = await rowsOf('web-2');
	const soft = rows.find((r) => r.Feature.startsWith('Soft limit'));
	const tcp = rows.find((r) => /tcp/i.test(r.Feature));
	assert.ok(soft && tcp, 'both features listed: ' + JSON.stringify(rows));
	assert.deepEqual([soft.Configures, soft.Listens, soft.Reads, num(soft['Uses (writes and registrations)'])], ['yes', 'no', '0', 5]);
	assert.equal(soft['Values written'], 'soft_limit_in_bytes set on 1 cgroup on 1 host: 256 MiB-512 MiB; reset to unlimited by 1 process');
	assert.deepEqual([tcp.Configures, tcp.Listens, tcp.Reads, num(tcp['Uses (writes and registrations)'])], ['no', 'no', '40 (read only)', 0]);
	assert.equal(tcp['Values written'], '–');
	// evil-3 listens to OOM notifications: a listener, not a writer.
	rows = await rowsOf('evil-3');
	assert.equal(rows.length, 1);
	assert.deepEqual([rows[0].Configures, rows[0].Listens, rows[0].Reads], ['no', 'yes', '0']);
	assert.equal(rows[0]['Values written'], 'notification listeners: 1 process on 1 host');
	await page.screenshot({ path: join(SHOTS, 'host-kinds.png'), fullPage: true });
	assert.deepEqual(await strayText(page), []);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the host page lists the deprecation messages the catalog does not know', async () => {
	const { page, ctx, problems } = await signedInPage();
	const hosts = JSON.parse((await request('GET', '/api/v1/hosts?host=web-1', adminToken)).body).hosts;
	await page.goto('https://127.0.0.1:' + port + '/#/host/' + hosts[0].host_id);
	await page.waitForSelector('#table-unknown');
	const rows = await page.$$eval('#table-unknown tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
	assert.equal(rows.length, 1);
	assert.equal(rows[0][0], UNKNOWN_TEXT);
	assert.equal(num(rows[0][1]), 3);
	assert.match(rows[0][2], /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
	await page.screenshot({ path: join(SHOTS, 'host-unknown.png'), fullPage: true });
	assert.deepEqual(await strayText(page), []);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('times out of range read "invalid time" and break no page', async () => {
	const { page, ctx, problems } = await signedInPage();
	const big = 2 ** 53 - 1;
	// The formatting module itself, in the browser that runs it.
	const shown = await page.evaluate(async (t) => {
		const f = await import('/js/format.js');
		return [f.fmtTime(t), f.fmtTime(-t), f.fmtTime(NaN), f.fmtTime('soon'), f.fmtTime({}), f.fmtAgo(t), f.fmtDay(t),
			f.fmtTime(8e12), f.fmtTime(86400), f.fmtTime(0), f.fmtAgo(0), f.fmtDay(86400), f.parseDay('nonsense')];
	}, big);
	assert.deepEqual(shown, ['invalid time', 'invalid time', 'invalid time', 'invalid time', 'invalid time', 'invalid time', '',
		'+255479-11-28 14:13 UTC', '1970-01-02 00:00 UTC', '–', 'never', '1970-01-02', '']);
	// A host whose times are out of range (a broken agent clock, a bad
	// database row): the page still renders, saying so.
	const hosts = JSON.parse((await request('GET', '/api/v1/hosts?host=web-1', adminToken)).body).hosts;
	await page.route('**/api/v1/hosts/' + hosts[0].host_id, async (route) => {
		const d = await (await route.fetch()).json();
		d.last_seen = big;
		d.features[0].first_used = big;
		d.features[0].last_used = -big;
		await route.fulfill({ json: d });
	});
	await page.goto('https://127.0.0.1:' + port + '/#/host/' + hosts[0].host_id);
	await page.waitForSelector('#table-host-features');
	assert.equal(await page.textContent('#host-last-seen'), 'invalid time (invalid time)');
	const cells = await page.$$eval('#table-host-features tbody tr:first-child td', (tds) => tds.map((t) => t.textContent));
	// first and last used are the table's last two columns
	assert.deepEqual(cells.slice(-2), ['invalid time', 'invalid time']);
	// A shared link with an out-of-range date filter.
	// The server refuses such a time (400); the page's own handling of
	// the parameter is what is tested here, so the API sees none.
	await page.route((u) => u.pathname === '/api/v1/features/memcg_v1.soft_limit' && u.search !== '', (route) =>
		route.continue({ url: route.request().url().replace(/\?.*$/, '') }));
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit?since=' + big + '&until=' + big);
	await page.waitForSelector('#feature-uses');
	assert.equal(await page.inputValue('#f-since'), '');
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('a kept feature detail says when it was computed; one computed for the page says nothing', async () => {
	const { page, ctx, problems } = await signedInPage();
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit');
	await page.waitForSelector('#feature-uses');
	assert.equal(await page.$('#feature-kept'), null);
	// What the server answers for a kept answer (docs/api.md, "Kept
	// answers"): the same document with an Age header, here 5 minutes.
	await page.route((u) => u.pathname === '/api/v1/features/memcg_v1.soft_limit', async (route) => {
		const r = await route.fetch();
		await route.fulfill({ response: r, headers: Object.assign({}, r.headers(), { age: '300' }) });
	});
	await page.goto('https://127.0.0.1:' + port + '/#/hosts');
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit');
	await page.waitForSelector('#feature-kept');
	assert.match(await page.textContent('#feature-kept'), /^Computed 5 min ago: /);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('a kept export preview and a kept readiness answer say when they were computed', async () => {
	const { page, ctx, problems } = await signedInPage();
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit');
	await page.waitForSelector('#export-text');
	await page.waitForFunction(() => !/^Loading/.test(document.querySelector('#export-text').textContent));
	assert.equal(await page.$('#export-kept'), null);
	await page.goto('https://127.0.0.1:' + port + '/#/readiness?target=debian-12-6.12');
	await page.waitForSelector('#readiness-stats');
	assert.equal(await page.$('#readiness-kept'), null);
	// the same answers with an Age header, as the server sends kept ones
	const aged = (seconds) => async (route) => {
		const r = await route.fetch();
		await route.fulfill({ response: r, headers: Object.assign({}, r.headers(), { age: String(seconds) }) });
	};
	await page.route((u) => u.pathname === '/api/v1/export/linux-mm', aged(7200));
	await page.route((u) => u.pathname === '/api/v1/readiness', aged(120));
	await page.goto('https://127.0.0.1:' + port + '/#/hosts');
	await page.goto('https://127.0.0.1:' + port + '/#/feature/memcg_v1.soft_limit');
	await page.waitForSelector('#export-kept');
	assert.match(await page.textContent('#export-kept'), /^Computed 2 h ago: this export's data /);
	// the note stands before the preview it is about
	assert.equal(await page.evaluate(() => document.querySelector('#export-kept').nextElementSibling.id), 'export-text');
	await page.goto('https://127.0.0.1:' + port + '/#/readiness?target=debian-12-6.12');
	await page.waitForSelector('#readiness-kept');
	assert.match(await page.textContent('#readiness-kept'), /^Computed 2 min ago: this answer /);
	assert.deepEqual(problems, []);
	await ctx.close();
});

test('the CSP forbids inline script', async () => {
	const r = await new Promise((resolve, reject) => {
		https.get({ host: '127.0.0.1', port, path: '/', ca, servername: 'localhost' }, (res) => {
			res.resume();
			resolve(res.headers);
		}).on('error', reject);
	});
	const csp = r['content-security-policy'] || '';
	// script-src, or default-src when script-src is absent, must be 'self' only.
	const dir = (name) => (csp.split(';').map((d) => d.trim()).find((d) => d.startsWith(name + ' ')) || '');
	const scriptSrc = dir('script-src') || dir('default-src');
	assert.equal(scriptSrc.replace(/^\S+\s+/, ''), "'self'", 'CSP: ' + csp);
	assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
	assert.equal(r['x-content-type-options'], 'nosniff');
});

test('a wrong token is refused with a clear message', async () => {
	const ctx = await browser.newContext({ ignoreHTTPSErrors: true });
	const page = await ctx.newPage();
	await page.goto('https://127.0.0.1:' + port + '/');
	await page.fill('#token', 'not-a-token');
	await page.click('#signin-form button[type=submit]');
	await page.waitForFunction(() => document.getElementById('signin-error').textContent.length > 0);
	assert.match(await page.textContent('#signin-error'), /Sign-in failed/);
	await ctx.close();
});

// tableOverflows(page): what in main runs past its frame horizontally with
// no way to scroll to the cut part. A table's frame is the nearest ancestor
// that clips or scrolls horizontally (it must then be scrollable if the
// table is wider), or else the table's parent (the table must fit in it);
// either way the frame must fit in main's column, and the document itself
// must not scroll sideways.
function tableOverflows(page) {
	return page.evaluate(() => {
		const bad = [];
		const main = document.getElementById('main');
		const content = (el) => {
			const r = el.getBoundingClientRect();
			const cs = getComputedStyle(el);
			return {
				left: r.left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft),
				right: r.right - parseFloat(cs.borderRightWidth) - parseFloat(cs.paddingRight),
			};
		};
		const span = (r) => Math.round(r.left) + '..' + Math.round(r.right);
		const outside = (r, box) => r.right > box.right + 1 || r.left < box.left - 1;
		const column = content(main);
		for (const t of main.querySelectorAll('table')) {
			const name = '#' + (t.id || t.closest('[id]').id);
			let frame = null;
			for (let el = t.parentElement; el !== main && !frame; el = el.parentElement)
				if (getComputedStyle(el).overflowX !== 'visible')
					frame = el;
			const tr = t.getBoundingClientRect();
			if (frame) {
				const ox = getComputedStyle(frame).overflowX;
				if (frame.scrollWidth > frame.clientWidth + 1 && ox !== 'auto' && ox !== 'scroll')
					bad.push(name + ' is cut by its frame (overflow-x ' + ox + ')');
			} else if (outside(tr, content(t.parentElement))) {
				bad.push(name + ' spans ' + span(tr) + ', past its parent ' + span(content(t.parentElement)));
			}
			const fr = (frame || t).getBoundingClientRect();
			if (outside(fr, column))
				bad.push(name + (frame ? "'s frame" : '') + ' spans ' + span(fr) + ', past the page column ' + span(column));
		}
		const doc = document.documentElement;
		if (doc.scrollWidth > doc.clientWidth)
			bad.push('the page scrolls sideways: ' + doc.scrollWidth + ' > ' + doc.clientWidth);
		return bad;
	});
}

// lastColumnCut(page, sel): how far the table's last header runs past
// main's column ('' when it does not): a column reachable only by
// scrolling.
function lastColumnCut(page, sel) {
	return page.$eval(sel, (t) => {
		const main = document.getElementById('main');
		const cs = getComputedStyle(main);
		const right = main.getBoundingClientRect().right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth);
		const last = t.querySelector('thead th:last-child').getBoundingClientRect().right;
		return last > right + 1 ? Math.round(last) + ' > ' + Math.round(right) : '';
	});
}

test('tables fit or scroll inside their frame at 1280 and 1920 px (and scroll at 800)', async () => {
	const { page, ctx, problems } = await signedInPage();
	const hosts = JSON.parse((await request('GET', '/api/v1/hosts?host=web-1', adminToken)).body).hosts;
	assert.equal(hosts.length, 1);
	const pages = [
		['overview', '/#/', '#table-features'],
		['feature', '/#/feature/memcg_v1.soft_limit', '#table-kernels'],
		['host', '/#/host/' + hosts[0].host_id, '#table-probes'],
		['hosts', '/#/hosts', '#table-hosts'],
		['health', '/#/health', '#table-h-probe_missing'],
		['readiness', '/#/readiness?target=debian-12-6.12', '#table-break-hosts'],
		['unknown', '/#/unknown', '#table-unknown'],
	];
	const bad = [];
	for (const width of [1280, 1920, 800]) {
		await page.setViewportSize({ width, height: 900 });
		for (const [what, path, sel] of pages) {
			await page.goto('https://127.0.0.1:' + port + path);
			await page.waitForSelector(sel);
			for (const b of await tableOverflows(page))
				bad.push(what + ' at ' + width + ' px: ' + b);
			await page.screenshot({ path: join(SHOTS, what + '-' + width + '.png'), fullPage: true });
		}
		// From 1280 px the overview's feature table fits whole: its last
		// column (the cgroup v2 replacement) needs no scrolling to be read.
		if (width < 1280)
			continue;
		await page.goto('https://127.0.0.1:' + port + '/#/');
		await page.waitForSelector('#table-features');
		const cut = await lastColumnCut(page, '#table-features');
		if (cut)
			bad.push('overview at ' + width + ' px: the replacement column is cut: ' + cut);
	}
	assert.deepEqual(bad, []);
	assert.deepEqual(problems, []);
	await ctx.close();
});
