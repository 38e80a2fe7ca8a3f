// The sortable table: the one table every page uses.
//
// table(columns, rows, opts): columns = [{key, label, num, text,
// render(row), value(row)}] (value: what the cell shows, sorts by and
// exports, when it is not row[key]); num columns align right and sort
// numerically (descending on first click), text columns may wrap
// anywhere (paths, messages). Clicking a header sorts by it, again
// reverses. With opts.id the table is #table-<id> and its sort is kept in
// the URL as ?sort_<id>=key:asc|desc, so a sorted view can be shared.
// opts.empty is the text shown for no rows. A table with an id has a
// "CSV" button above it that downloads its rows, in the order shown, as
// twilight-<id>.csv (csv.js: the rows' values, not their rendering).
//
// The table sits in a .table-frame that scrolls sideways when the table
// cannot fit, so no column is ever cut off at the page's edge.
import { saveBlob } from './api.js';
import { csvText } from './csv.js';
import { h } from './dom.js';
import { fmtNum } from './format.js';
import { currentRoute, updateParams } from './router.js';

function sortState(id) {
	const saved = id ? currentRoute().params.get('sort_' + id) : null;
	if (!saved)
		return { key: null, dir: 1 };
	const [key, d] = saved.split(':');
	return { key, dir: d === 'desc' ? -1 : 1 };
}

function cellValue(c, r) {
	return c.value ? c.value(r) : r[c.key];
}

// compare(col, dir): a sort comparator; absent values go last either way.
function compare(col, dir) {
	return (a, b) => {
		const x = cellValue(col, a), y = cellValue(col, b);
		if (x === y)
			return 0;
		if (x === null || x === undefined)
			return 1;
		if (y === null || y === undefined)
			return -1;
		return (col.num ? x - y : String(x).localeCompare(String(y))) * dir;
	};
}

// A cell shows render(row), else the column's value (value(row) or
// row[key]), numbers formatted.
function cell(c, r) {
	const v = cellValue(c, r);
	return h('td', { class: c.num ? 'num' : (c.text ? 'text' : '') },
		c.render ? c.render(r) : (c.num ? fmtNum(v) : v));
}

export function table(columns, rows, opts = {}) {
	const state = sortState(opts.id);
	const tbody = h('tbody');
	const ths = columns.map((c) => h('th', {
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
	function paint() {
		const data = sorted();
		for (const th of ths) {
			th.classList.toggle('sorted-asc', th.dataset.key === state.key && state.dir > 0);
			th.classList.toggle('sorted-desc', th.dataset.key === state.key && state.dir < 0);
		}
		if (data.length)
			tbody.replaceChildren(...data.map((r) => h('tr', {}, columns.map((c) => cell(c, r)))));
		else
			tbody.replaceChildren(h('tr', {}, h('td', { colspan: columns.length, class: 'muted' }, opts.empty || 'Nothing to show.')));
	}
	function sorted() {
		const data = rows.slice();
		const col = columns.find((c) => c.key === state.key);
		return col ? data.sort(compare(col, state.dir)) : data;
	}
	paint();
	const frame = h('div', { class: 'table-frame' },
		h('table', { id: opts.id ? 'table-' + opts.id : null }, h('thead', {}, h('tr', {}, ths)), tbody));
	if (!opts.id)
		return frame;
	const csv = h('button', {
		type: 'button', class: 'csv', id: 'csv-' + opts.id, title: 'Download these rows as CSV',
		onclick: () => saveBlob(new Blob([csvText(columns, sorted())], { type: 'text/csv' }),
			'twilight-' + opts.id + '.csv'),
	}, 'CSV');
	return h('div', { class: 'table-block' }, h('div', { class: 'table-tools' }, csv), frame);
}
