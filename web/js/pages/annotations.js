// A feature's use cases (annotations): listed for everyone with their
// structured fields (intent, what sets it, whether v2 was tried and what fell
// short, the owning team), recorded and deleted by admins. A viewer gets no form and no delete buttons, so the
// page never asks for something the API would refuse.
import { api } from '../api.js';
import { h } from '../dom.js';
import { fmtTime } from '../format.js';
import { isAdmin, whoami } from '../session.js';
import { loadExport } from './export.js';

const INTENT = { intentional: 'intentional', accidental: 'accidental (a default nobody chose)' };
const TRIED = { no: 'v2 not tried', works: 'v2 tried: works', falls_short: 'v2 tried: falls short' };

function meta(a) {
	return (a.workload ? 'workload ' + a.workload + ' · ' : '') +
		(a.fits ? 'v2 replacement fits: ' + a.fits + ' · ' : '') +
		'by ' + (a.author || '?') + ', ' + fmtTime(a.created);
}

// fields(a): the structured fields a use case states, one line; null when none.
function fields(a) {
	const parts = [];
	if (a.intent)
		parts.push(INTENT[a.intent] || a.intent);
	if (a.set_by)
		parts.push('set by ' + a.set_by);
	if (a.v2_tried)
		parts.push((TRIED[a.v2_tried] || a.v2_tried) + (a.shortfall ? ' (' + a.shortfall + ')' : ''));
	if (a.team)
		parts.push('team ' + a.team);
	return parts.length ? h('div', { class: 'meta usecase-fields' }, parts.join(' · ')) : null;
}

function choice(id, label, options) {
	return h('select', { id }, h('option', { value: '' }, label),
		Object.entries(options).map(([v, t]) => h('option', { value: v }, t)));
}

// The optional structured fields of the form, and the body members they set.
function fieldInputs() {
	const el = {
		intent: choice('annot-intent', 'intentional or accidental? (not said)', INTENT),
		set_by: h('input', { id: 'annot-set-by', maxlength: 128, placeholder: 'set by (optional), e.g. docker --memory-reservation' }),
		v2_tried: choice('annot-v2-tried', 'v2 replacement tried? (not said)', TRIED),
		shortfall: h('input', { id: 'annot-shortfall', maxlength: 1000, placeholder: 'what fell short (with "falls short")' }),
		team: h('input', { id: 'annot-team', maxlength: 64, placeholder: 'owning team (optional)' }),
	};
	return {
		nodes: Object.values(el),
		fill(body) {
			for (const [k, e] of Object.entries(el))
				if (e.value.trim())
					body[k] = e.value.trim();
		},
		clear() {
			for (const e of Object.values(el))
				e.value = '';
		},
	};
}

function form(id, err, refresh) {
	const text = h('textarea', { id: 'annot-text', required: true, placeholder: 'Why does the fleet depend on this? (e.g. "batch jobs rely on soft limits for reclaim ordering")' });
	const workload = h('input', { id: 'annot-workload', placeholder: 'workload (optional): process or container' });
	const fits = h('select', { id: 'annot-fits' }, h('option', { value: '' }, 'v2 replacement fits? (unknown)'),
		h('option', { value: 'yes' }, 'yes'), h('option', { value: 'partial' }, 'partially'), h('option', { value: 'no' }, 'no'));
	const more = fieldInputs();
	return h('form', {
		class: 'annot-form', id: 'annot-form', onsubmit: async (ev) => {
			ev.preventDefault();
			err.textContent = '';
			const body = { feature: id, text: text.value.trim() };
			if (workload.value.trim())
				body.workload = workload.value.trim();
			if (fits.value)
				body.fits = fits.value;
			more.fill(body);
			try {
				await api('/api/v1/annotations', { method: 'POST', body });
				text.value = '';
				workload.value = '';
				more.clear();
				await refresh();
			} catch (e) {
				err.textContent = 'Could not save: ' + e.message;
			}
		},
	}, text, workload, fits, more.nodes, h('button', { type: 'submit' }, 'Add use case'), err);
}

// annotationsSection(id, list): the section for feature id, showing list
// first. After a change it reloads the list and the export preview.
export function annotationsSection(id, list) {
	const admin = isAdmin(); // the API refuses the rest anyway
	const box = h('div', { id: 'annotations' });
	const err = h('p', { class: 'error', role: 'alert' });
	async function refresh() {
		const r = await api('/api/v1/annotations?feature=' + encodeURIComponent(id));
		paint(r.annotations || []);
		const pre = document.getElementById('export-text');
		if (pre)
			await loadExport(id, pre);
	}
	const remove = (a) => async () => {
		try {
			await api('/api/v1/annotations/' + encodeURIComponent(a.id), { method: 'DELETE' });
			await refresh();
		} catch (e) {
			err.textContent = e.message;
		}
	};
	function paint(items) {
		box.replaceChildren(...(items.length ? items.map((a) => h('div', { class: 'annotation' },
			h('div', {}, a.text),
			fields(a),
			h('div', { class: 'meta' }, meta(a)),
			admin ? h('button', { class: 'secondary', type: 'button', onclick: remove(a) }, 'Delete') : null))
			: [h('p', { class: 'muted' }, 'No use case recorded yet.')]));
	}
	paint(list);
	if (!admin) {
		const me = whoami();
		return h('section', {}, h('h2', {}, 'Use cases (annotations)'), box,
			h('p', { class: 'muted', id: 'annot-readonly' }, 'Use cases are recorded by admins; this token is a ' +
				(me ? me.role : 'viewer') + ' token.'));
	}
	return h('section', {}, h('h2', {}, 'Use cases (annotations)'), box, form(id, err, refresh));
}
