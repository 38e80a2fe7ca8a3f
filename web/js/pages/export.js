// A feature's linux-mm export preview: exactly what the export endpoint
// returns, to copy or download, of the whole fleet or of the hosts carrying
// one operator label (label=KEY=VALUE in the page's URL, the API's own
// filter). twilight never sends mail.
import { apiText, csvUrl, download, exportUrl, saveBlob } from '../api.js';
import { banner, h, keptBanner } from '../dom.js';
import { labelFilter } from './health.js';

// loadExport(id, pre): fill pre (the preview element, attached or not)
// with exactly what the export endpoint returns for feature id, counting
// only the hosts labelled pre.dataset.label (KEY=VALUE) if it is set: a
// reload after an annotation keeps the label the preview was made with.
// Before pre (in its parent), #export-kept says when a kept answer's data
// were computed (docs/api.md, "Kept answers").
export async function loadExport(id, pre) {
	const { text, age } = await apiText(exportUrl({ feature: id, label: pre.dataset.label }));
	const old = pre.parentNode ? pre.parentNode.querySelector('#export-kept') : null;
	const note = keptBanner(age, 'export-kept', 'this export\'s data');
	pre.textContent = text;
	if (old)
		old.remove();
	if (note && pre.parentNode)
		pre.before(note);
	return text;
}

function buttons(id, label, pre, msg) {
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
	const text = h('button', {
		type: 'button', class: 'secondary', id: 'export-text-download', onclick: () =>
			saveBlob(new Blob([pre.textContent], { type: 'text/plain' }), 'twilight-linux-mm-' + id + '.txt'),
	}, 'Download');
	const csv = h('button', {
		type: 'button', class: 'secondary', id: 'export-csv', onclick: async () => {
			msg.textContent = '';
			try {
				await download(csvUrl({ feature: id, label }), 'twilight-linux-mm-' + id + '.csv');
			} catch (e) {
				msg.textContent = 'CSV download failed: ' + e.message;
			}
		},
	}, 'Download CSV');
	return h('div', { class: 'pager' }, copy, text, csv, msg);
}

// exportSection(id, params): the preview of feature id's export, counting
// the hosts carrying the label in params (the page's URL parameters) if any.
export function exportSection(id, params) {
	const label = params.get('label') || '';
	const pre = h('pre', { class: 'export', id: 'export-text' }, 'Loading the export…');
	if (label)
		pre.dataset.label = label;
	const msg = h('span', { class: 'muted', role: 'status' });
	const sec = h('section', {}, h('h2', {}, 'linux-mm export preview'),
		h('p', { class: 'muted' }, 'Exactly what GET /api/v1/export/linux-mm returns for this feature. twilight never sends mail: copy it into your mail client.'),
		labelFilter(params, { id: 'export-label', caption: 'Count only hosts with label' }),
		buttons(id, label, pre, msg), pre);
	loadExport(id, pre).catch((e) => {
		pre.textContent = '';
		const err = banner('error', 'Export failed: ' + e.message);
		err.id = 'export-error';
		pre.replaceWith(err);
	});
	return sec;
}
