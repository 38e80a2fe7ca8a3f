// CSV text of a table's rows (RFC 4180: comma separated, CRLF line ends,
// a header row; a field with a comma, quote or line break is quoted, its
// quotes doubled). Strings came from hosts (process names, cgroup paths,
// kernel messages): one that a spreadsheet would run as a formula (it
// starts with =, +, -, @, a tab or a carriage return) gets a leading ' so
// that it stays text. Numbers are written as they are.

function field(v) {
	if (v === null || v === undefined)
		return '';
	if (typeof v === 'number')
		return Number.isFinite(v) ? String(v) : '';
	let s = Array.isArray(v) ? v.join(' ') : String(v);
	if (/^[=+\-@\t\r]/.test(s))
		s = "'" + s;
	return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

// csvText(columns, rows): columns = [{label, key, value(row), csv(row)}];
// a column's csv(row), else its value(row), else row[key] is written.
export function csvText(columns, rows) {
	const get = (c, r) => (c.csv ? c.csv(r) : (c.value ? c.value(r) : r[c.key]));
	const lines = [columns.map((c) => field(c.label)).join(',')];
	for (const r of rows)
		lines.push(columns.map((c) => field(get(c, r))).join(','));
	return lines.join('\r\n') + '\r\n';
}
