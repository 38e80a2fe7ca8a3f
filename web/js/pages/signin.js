// The sign-in page: a token pasted by hand, checked by loading the session.
import { clearToken, setToken } from '../api.js';
import { setMain } from '../dom.js';
import { loadSession } from '../session.js';

// pageSignIn(message, done): show the form (with message as the error, if
// any); call done() once a token was accepted.
export function pageSignIn(message, done) {
	setMain(document.getElementById('signin-tpl').content.cloneNode(true));
	const form = document.getElementById('signin-form');
	const err = document.getElementById('signin-error');
	if (message)
		err.textContent = message;
	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		const token = document.getElementById('token').value.trim();
		if (!token) {
			err.textContent = 'Paste a token first.';
			return;
		}
		setToken(token);
		err.textContent = '';
		try {
			await loadSession();
		} catch (e) {
			clearToken();
			err.textContent = 'Sign-in failed: ' + e.message;
			return;
		}
		done();
	});
	document.getElementById('token').focus();
}
