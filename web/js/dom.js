// DOM helpers. Every string that came from a host (process names, cgroup
// paths, hostnames, kernel messages) reaches the page through textContent
// or setAttribute, never innerHTML; the CSP forbids inline script anyway.

import { fmtAgo } from './format.js';

// h(tag, attrs, ...children): build an element. Strings become text nodes;
// on* attributes given functions become listeners; null, undefined and
// false attributes or children are left out.
export function h(tag, attrs, ...children) {
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

// mainEl(): the page's content column, which every page replaces.
export function mainEl() {
	return document.getElementById('main');
}

// setMain(...nodes): show nodes as the whole page content. Like h()'s
// children, arrays are flattened and null, undefined and false left out
// (replaceChildren alone would print them as text).
export function setMain(...nodes) {
	mainEl().replaceChildren(...nodes.flat(Infinity).filter((n) => n !== undefined && n !== null && n !== false));
}

// banner(kind, text): a one-line notice; kind 'error' is an alert, 'loading'
// a status.
export function banner(kind, text) {
	return h('div', { class: 'banner ' + kind, role: kind === 'error' ? 'alert' : 'status' }, text);
}

// keptBanner(age, id, what): for a kept answer (docs/api.md, "Kept
// answers") age seconds old, a note with element id that what (a noun
// phrase: "this detail") was computed that long ago; null for an answer
// computed for this page (age null).
export function keptBanner(age, id, what) {
	if (age === null || age === undefined)
		return null;
	return h('div', { class: 'banner info', id, role: 'status' },
		'Computed ' + fmtAgo(Date.now() / 1000 - age) + ': ' + what + ' is slow to compute on this fleet, so the ' +
		'server keeps it and computes it again in the background. Its figures can lag the overview\'s.');
}

// statusBadge(status): a catalog feature's upstream status as a badge.
export function statusBadge(status) {
	const s = String(status || 'unknown');
	return h('span', { class: 'status status-' + s.replace(/[^a-z-]/g, '') }, s);
}

// hostLink(id, name): a link to the host page, named by hostname.
export function hostLink(id, name) {
	return h('a', { href: '#/host/' + encodeURIComponent(id) }, name || id);
}
