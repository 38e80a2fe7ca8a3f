// Migration status (GET/POST/DELETE /api/v1/migration-status): where the
// move off a feature stands, per workload (or for the feature as a whole),
// with an owner and a date. Shown on the feature page (set and cleared by
// admins) and in readiness (migrationText()). A workload marked migrated
// that was seen using the feature again after that date is flagged.
import { api, query } from '../api.js';
import { h } from '../dom.js';
import { fmtDay, fmtTime } from '../format.js';
import { isAdmin } from '../session.js';
import { table } from '../table.js';

const STATES = { migrating: 'migrating', migrated: 'migrated', accepted_risk: 'accepted risk', blocked: 'blocked' };

// migrationText(m): a status as one line ("blocked: reason · owner x ·
// since YYYY-MM-DD"); '' for none.
export function migrationText(m) {
	if (!m || !m.status)
		return '';
	return (STATES[m.status] || m.status) + (m.reason ? ': ' + m.reason : '') +
		' · owner ' + (m.owner || '?') + ' · since ' + (fmtDay(m.date) || '?');
}

function seenAgain(s) {
	const a = s.seen_again;
	if (!a)
		return '';
	return 'used again on ' + a.hosts + ' host' + (a.hosts === 1 ? '' : 's') + ', last ' + fmtTime(a.last_seen);
}

function form(id, err, refresh) {
	const workload = h('input', { id: 'mig-workload', maxlength: 128, placeholder: 'workload (process; empty: the whole feature)' });
	const status = h('select', { id: 'mig-status', required: true },
		Object.entries(STATES).map(([v, t]) => h('option', { value: v }, t)));
	const reason = h('input', { id: 'mig-reason', maxlength: 1000, placeholder: 'reason (required when blocked)' });
	const owner = h('input', { id: 'mig-owner', maxlength: 64, required: true, placeholder: 'owner (team or person)' });
	const date = h('input', { id: 'mig-date', type: 'date' });
	return h('form', {
		class: 'annot-form', id: 'mig-form', onsubmit: async (ev) => {
			ev.preventDefault();
			err.textContent = '';
			const body = { feature: id, status: status.value, owner: owner.value.trim() };
			for (const [k, e] of [['workload', workload], ['reason', reason], ['date', date]])
				if (e.value.trim())
					body[k] = e.value.trim();
			try {
				await api('/api/v1/migration-status', { method: 'POST', body });
				workload.value = reason.value = '';
				await refresh();
			} catch (e) {
				err.textContent = 'Could not save: ' + e.message;
			}
		},
	}, workload, status, reason, owner, date, h('button', { type: 'submit' }, 'Set status'), err);
}

// migrationSection(id, list): feature id's statuses, list first; admins get
// the form and a Clear button per row.
export function migrationSection(id, list) {
	const admin = isAdmin();
	const box = h('div', { id: 'migration' });
	const err = h('p', { class: 'error', role: 'alert' });
	async function refresh() {
		const r = await api(query('/api/v1/migration-status', { feature: id }));
		paint(r.statuses || []);
	}
	const clear = (s) => async () => {
		try {
			await api(query('/api/v1/migration-status', { feature: id, workload: s.workload || '' }), { method: 'DELETE' });
			await refresh();
		} catch (e) {
			err.textContent = e.message;
		}
	};
	const columns = [
		{ key: 'workload', label: 'Workload', text: true, render: (s) => s.workload || h('span', { class: 'muted' }, '(the whole feature)') },
		{ key: 'status', label: 'Status', text: true, value: (s) => migrationText(s) },
		{ key: 'seen_again', label: 'Seen again', text: true, value: seenAgain,
			render: (s) => (s.seen_again ? h('span', { class: 'error' }, seenAgain(s)) : '') },
		{ key: 'author', label: 'Set by', text: true, value: (s) => (s.author || '?') + ', ' + fmtTime(s.updated) },
	];
	if (admin)
		columns.push({ key: 'clear', label: '', render: (s) => h('button', { class: 'secondary', type: 'button', onclick: clear(s) }, 'Clear') });
	function paint(items) {
		box.replaceChildren(table(columns, items, { id: 'migration-status', empty: 'No migration status set.' }));
	}
	paint(list);
	return h('section', {}, h('h2', {}, 'Migration status'), box, admin ? form(id, err, refresh) : null);
}
