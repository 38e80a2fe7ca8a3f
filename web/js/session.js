// What the signed-in session knows: the catalog (GET /api/v1/catalog) and
// who is signed in (GET /api/v1/whoami), loaded once per sign-in. Feature
// names, statuses and replacements come from the catalog; there is no
// second copy of it in the dashboard.
import { api } from './api.js';
import { h } from './dom.js';

let catalog = null; // {version, features: [...]}
let byId = new Map();
let me = null; // {name, role}

// loadSession(): fetch the catalog and the token's identity.
export async function loadSession() {
	const c = await api('/api/v1/catalog');
	const who = await api('/api/v1/whoami');
	catalog = c;
	byId = new Map((c.features || []).map((f) => [f.id, f]));
	me = who;
}

// clearSession(): forget both (sign-out, rejected token).
export function clearSession() {
	catalog = null;
	byId = new Map();
	me = null;
}

export function signedIn() {
	return catalog !== null;
}

export function whoami() {
	return me;
}

export function isAdmin() {
	return !!me && me.role === 'admin';
}

export function catalogVersion() {
	return catalog ? catalog.version : '?';
}

export function catalogFeatures() {
	return catalog ? catalog.features || [] : [];
}

// feature(id): the catalog entry for id, or undefined.
export function feature(id) {
	return byId.get(id);
}

export function featureTitle(id) {
	const f = byId.get(id);
	return f ? f.title : id;
}

// featureLink(id): a link to the feature page, named by its title.
export function featureLink(id) {
	return h('a', { href: '#/feature/' + encodeURIComponent(id) }, featureTitle(id));
}
