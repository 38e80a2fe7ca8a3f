// Formatting helpers: pure functions from API values to display text.
//
// Every function here is total: whatever the API (or a hostile agent's
// report) hands over, the result is a string, never an exception. A time
// outside what Date can hold (|t| > 8.64e12 s, e.g. 2^53-1) reads
// "invalid time"; toISOString() would throw RangeError.

const INVALID_TIME = 'invalid time';

// dateOf(t): the Date for Unix seconds t, or null when t is no number or
// out of Date's range.
function dateOf(t) {
	if (typeof t !== 'number' && typeof t !== 'string')
		return null;
	const n = typeof t === 'number' ? t : Number(t);
	if (!Number.isFinite(n))
		return null;
	const d = new Date(n * 1000);
	return Number.isNaN(d.getTime()) ? null : d;
}

// fmtNum(n): n with thousands separators; '–' when absent.
export function fmtNum(n) {
	if (n === null || n === undefined)
		return '–';
	const x = Number(n);
	return Number.isFinite(x) ? x.toLocaleString('en-US') : String(n);
}

// fmtShare(x): a fraction 0..1 as a percentage, one decimal below 10%.
export function fmtShare(x) {
	if (x === null || x === undefined)
		return '–';
	const v = Number(x);
	if (!Number.isFinite(v))
		return String(x);
	return (100 * v).toFixed(v < 0.1 ? 1 : 0) + '%';
}

// fmtTime(t): Unix seconds as "YYYY-MM-DD HH:MM UTC"; '–' when absent
// (0 or missing), INVALID_TIME when out of range.
export function fmtTime(t) {
	if (t === null || t === undefined || t === 0 || t === '')
		return '–';
	const d = dateOf(t);
	if (!d)
		return INVALID_TIME;
	// Years past 9999 come as "+275760-..."; keep them whole.
	return d.toISOString().replace(/T(\d\d:\d\d).*$/, ' $1 UTC');
}

// fmtDay(t): Unix seconds as the "YYYY-MM-DD" a date input takes; '' when
// absent or out of the range a date input can show.
export function fmtDay(t) {
	const d = t ? dateOf(t) : null;
	if (!d)
		return '';
	const s = d.toISOString().slice(0, 10);
	return /^\d{4}-\d\d-\d\d$/.test(s) ? s : '';
}

// parseDay(s): "YYYY-MM-DD" (a date input's value) as Unix seconds at
// 00:00 UTC; '' when empty or not a date.
export function parseDay(s) {
	if (!s)
		return '';
	const ms = Date.parse(s + 'T00:00:00Z');
	return Number.isFinite(ms) ? Math.floor(ms / 1000) : '';
}

// fmtAgo(t, now): how long before now (Unix seconds, default the clock)
// t was: "5 min ago"; 'never' when absent, INVALID_TIME when out of range.
export function fmtAgo(t, now = Date.now() / 1000) {
	if (!t)
		return 'never';
	if (!dateOf(t))
		return INVALID_TIME;
	const s = now - Number(t);
	if (s < -300)
		return 'in the future (clock skew?)';
	if (s < 120)
		return Math.round(Math.max(0, s)) + ' s ago';
	if (s < 7200)
		return Math.round(s / 60) + ' min ago';
	if (s < 172800)
		return Math.round(s / 3600) + ' h ago';
	return Math.round(s / 86400) + ' days ago';
}
