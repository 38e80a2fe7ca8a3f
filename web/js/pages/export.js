// A feature's linux-mm export preview: exactly what the export endpoint
// returns, to copy or download. twilight never sends mail.
import { api, csvUrl, download, exportUrl, saveBlob } from '../api.js';
import { banner, h } from '../dom.js';

// loadExport(id, pre): fill pre (the preview element, attached or not)
// with exactly what the export endpoint returns for feature id.
export async function loadExport(id, pre) {
	const txt = await api(exportUrl({ feature: id }), { text: true });
	pre.textContent = txt;
	return txt;
}

function buttons(id, pre, msg) {
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
				await download(csvUrl({ feature: id }), 'twilight-linux-mm-' + id + '.csv');
			} catch (e) {
				msg.textContent = 'CSV download failed: ' + e.message;
			}
		},
	}, 'Download CSV');
	return h('div', { class: 'pager' }, copy, text, csv, msg);
}

export function exportSection(id) {
	const pre = h('pre', { class: 'export', id: 'export-text' }, 'Loading the export…');
	const msg = h('span', { class: 'muted', role: 'status' });
	const sec = h('section', {}, h('h2', {}, 'linux-mm export preview'),
		h('p', { class: 'muted' }, 'Exactly what GET /api/v1/export/linux-mm returns for this feature. twilight never sends mail: copy it into your mail client.'),
		buttons(id, pre, msg), pre);
	loadExport(id, pre).catch((e) => {
		pre.textContent = '';
		pre.replaceWith(banner('error', 'Export failed: ' + e.message));
	});
	return sec;
}
