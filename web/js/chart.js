// Charts: a thin wrapper around uPlot (npm, served by twilight-server from
// /vendor; index.html loads it before the modules run).
import { banner, h, mainEl } from './dom.js';

export const DAY = 86400;
const PALETTE = ['#3b4fd1', '#b35c00', '#1e7a3c', '#b3261e', '#7a3cb3', '#00838f', '#6d4c41', '#c2185b'];

// dayAxis(timelines, minDays): every day (Unix seconds at 00:00 UTC) from
// the earliest point (or minDays before today, whichever is earlier; at
// most a year back) to today, so a single data point still draws a
// readable month, not years.
export function dayAxis(timelines, minDays) {
	const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
	let first = today - (minDays - 1) * DAY;
	for (const tl of timelines)
		for (const p of tl || [])
			if (Number.isFinite(p.day))
				first = Math.min(first, Math.floor(p.day / DAY) * DAY);
	first = Math.max(first, today - 365 * DAY);
	const days = [];
	for (let d = first; d <= today; d += DAY)
		days.push(d);
	return days;
}

// onAxis(days, timeline, key): the timeline's key values on the day axis, 0 where absent.
export function onAxis(days, timeline, key) {
	const m = new Map((timeline || []).map((p) => [Math.floor(p.day / DAY) * DAY, p[key]]));
	return days.map((d) => m.get(d) || 0);
}

function width(box) {
	return Math.max(300, Math.min(1200, (box.clientWidth || mainEl().clientWidth) - 20));
}

// follow(box, plot): keep the plot as wide as its box when the window
// changes; let go of both once the box has left the page.
function follow(box, plot) {
	const ro = new ResizeObserver(() => {
		if (!box.isConnected) {
			ro.disconnect();
			plot.destroy();
			return;
		}
		const w = width(box);
		if (w !== plot.width)
			plot.setSize({ width: w, height: plot.height });
	});
	ro.observe(box);
}

// lineChart(title, days, series): a .chart box drawing series ([{label,
// values}], one value per day) over days. The chart is drawn once the box
// is in the page (uPlot measures it); failures show in the box.
export function lineChart(title, days, series) {
	const box = h('div', { class: 'chart', 'aria-label': title });
	const uPlot = globalThis.uPlot;
	if (typeof uPlot === 'undefined') {
		box.append(banner('error', 'Chart library failed to load (/vendor/uPlot.iife.min.js).'));
		return box;
	}
	if (!days.length) {
		box.append(h('p', { class: 'muted' }, title + ': no data in this range.'));
		return box;
	}
	const opts = {
		title,
		width: width(box),
		height: 220,
		series: [{}].concat(series.map((s, i) => ({ label: s.label, stroke: PALETTE[i % PALETTE.length], width: 2 }))),
		axes: [{}, { size: 60 }],
		scales: { x: { time: true } },
	};
	requestAnimationFrame(() => {
		let plot;
		try {
			opts.width = width(box);
			plot = new uPlot(opts, [days].concat(series.map((s) => s.values)), box);
		} catch (e) {
			box.append(banner('error', 'Chart failed: ' + e.message));
			return;
		}
		follow(box, plot);
	});
	return box;
}
