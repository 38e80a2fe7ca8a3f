// twilight dashboard: a small single-page app over the JSON API
// (docs/api.md). This entry module is the shell: the header (navigation,
// who is signed in, sign-out) and the route table. Each page is a module
// in js/pages/; the shared parts are in js/ (api, table, chart, router,
// format, dom, session). Plain ES modules, no build step.
import { clearToken, getToken } from './js/api.js';
import { banner, h, setMain } from './js/dom.js';
import { pageFeature } from './js/pages/feature.js';
import { pageHealth } from './js/pages/health.js';
import { pageHost } from './js/pages/host.js';
import { pageHosts } from './js/pages/hosts.js';
import { pageOverview } from './js/pages/overview.js';
import { pageReadiness } from './js/pages/readiness.js';
import { pageSignIn } from './js/pages/signin.js';
import { pageUnknown } from './js/pages/unknown.js';
import { resolve } from './js/router.js';
import { clearSession, loadSession, signedIn, whoami } from './js/session.js';

const ROUTES = [
	['/', pageOverview],
	['/feature/:id', pageFeature],
	['/hosts', pageHosts],
	['/host/:id', pageHost],
	['/health', pageHealth],
	['/readiness', pageReadiness],
	['/unknown', pageUnknown],
];

function pageNotFound(view) {
	setMain(h('h1', {}, 'Not found'), h('p', {}, 'No page at ' + view.path + '. '), h('a', { href: '#/' }, 'Back to the overview'));
}

// shell(on): show or hide the signed-in parts of the header.
function shell(on) {
	const me = whoami();
	document.getElementById('nav').hidden = !on;
	document.getElementById('signout').hidden = !on;
	document.getElementById('who').textContent = on && me ? 'signed in as ' + me.name + ' (' + me.role + ')' : '';
}

function signIn(message) {
	shell(false);
	pageSignIn(message, route);
}

async function route() {
	const { page, view } = resolve(ROUTES, pageNotFound);
	if (!getToken()) {
		signIn();
		return;
	}
	shell(true);
	try {
		if (!signedIn()) {
			await loadSession();
			shell(true);
		}
		await page(view);
	} catch (e) {
		if (!view.current())
			return;
		if (e.status === 401) {
			clearSession();
			signIn(e.message);
			return;
		}
		setMain(banner('error', 'Something went wrong: ' + e.message));
	}
}

document.getElementById('signout').addEventListener('click', () => {
	clearToken();
	clearSession();
	location.hash = '#/';
	route();
});
window.addEventListener('hashchange', route);
route();
