// Routing and URL state. The route lives in the hash (#/path?query), with
// every filter and sort order in the query, so a view can be shared.

// currentRoute(): {path, params} of the location's hash.
export function currentRoute() {
	const raw = location.hash.replace(/^#/, '') || '/';
	const q = raw.indexOf('?');
	const path = q < 0 ? raw : raw.slice(0, q);
	const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
	return { path, params };
}

// updateParams(obj, quiet): merge obj into the hash query (empty values
// remove a key). quiet = replace the history entry without re-rendering.
export function updateParams(obj, quiet) {
	const { path, params } = currentRoute();
	for (const [k, v] of Object.entries(obj)) {
		if (v === '' || v === null || v === undefined)
			params.delete(k);
		else
			params.set(k, v);
	}
	const qs = params.toString();
	const hash = '#' + path + (qs ? '?' + qs : '');
	if (quiet)
		history.replaceState(null, '', hash);
	else
		location.hash = hash;
}

// match(pattern, path): the decoded :name segments of path when it matches
// pattern ('/host/:id'), else null. A malformed %-escape matches nothing.
function match(pattern, path) {
	const want = pattern.split('/').filter(Boolean);
	const got = path.split('/').filter(Boolean);
	if (want.length !== got.length)
		return null;
	const args = {};
	for (let i = 0; i < want.length; i++) {
		let seg;
		try {
			seg = decodeURIComponent(got[i]);
		} catch (e) {
			return null;
		}
		if (want[i].startsWith(':'))
			args[want[i].slice(1)] = seg;
		else if (want[i] !== seg)
			return null;
	}
	return args;
}

let renderSeq = 0; // drops results of superseded navigations

// resolve(routes, notFound): a view of the current location for the first
// of routes ([pattern, page(view)]) that matches, or notFound. The view
// is {path, params, args, current()}; current() turns false once a later
// navigation started, so a page that awaited something must check it
// before it touches the DOM.
export function resolve(routes, notFound) {
	const seq = ++renderSeq;
	const { path, params } = currentRoute();
	const view = { path, params, args: {}, current: () => seq === renderSeq };
	for (const [pattern, page] of routes) {
		const args = match(pattern, path);
		if (args)
			return { page, view: Object.assign(view, { args }) };
	}
	return { page: notFound, view };
}
