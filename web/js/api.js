// The API client (docs/api.md). The token lives in sessionStorage and
// travels as an Authorization header: no cookies, so no CSRF. Every failure
// becomes an Error whose message says which request failed and why, ready
// to show on the page.

const TOKEN_KEY = 'twilight.token';

export function getToken() {
	return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token) {
	sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken() {
	sessionStorage.removeItem(TOKEN_KEY);
}

// ApiError: the server answered with an error. status is the HTTP status,
// body the parsed JSON error ({error, reason, field}) or null.
export class ApiError extends Error {
	constructor(status, body, path) {
		const reason = body && (body.reason || body.error) ? (body.reason || body.error) : 'HTTP ' + status;
		super(path + ': ' + reason + (body && body.field ? ' (field ' + body.field + ')' : ''));
		this.status = status;
		this.body = body;
	}
}

// query(path, params): path with params (an object or URLSearchParams)
// appended as a query string; empty values are left out.
export function query(path, params) {
	const q = new URLSearchParams();
	for (const [k, v] of params instanceof URLSearchParams ? params.entries() : Object.entries(params || {}))
		if (v !== '' && v !== null && v !== undefined)
			q.set(k, v);
	const s = q.toString();
	return s ? path + '?' + s : path;
}

// exportUrl(params, format): the linux-mm export endpoint for params
// (feature, days, ...) in format 'text', 'csv' or 'json'.
export function exportUrl(params, format = 'text') {
	return query('/api/v1/export/linux-mm', Object.assign({}, params, { format: format === 'text' ? '' : format }));
}

// csvUrl(params): the export as CSV (RFC 4180, one row per feature).
export function csvUrl(params) {
	return exportUrl(params, 'csv');
}

async function send(path, method, body) {
	const headers = { Authorization: 'Bearer ' + getToken() };
	if (body !== undefined)
		headers['Content-Type'] = 'application/json';
	try {
		return await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
	} catch (e) {
		throw new Error(path + ': the server did not answer (' + e.message + '). Is twilight-server running?');
	}
}

async function failure(resp, path) {
	let b = null;
	try {
		b = await resp.json();
	} catch (e) {
		b = null;
	}
	if (resp.status === 403 && (!b || !b.reason))
		b = { reason: 'this needs an admin token' };
	return new ApiError(resp.status, b, path);
}

// The Age (seconds) of the JSON answers that were kept ones (docs/api.md,
// "Kept answers"): the server keeps an answer that was slow to compute
// and serves it again, computing it anew in the background.
const ages = new WeakMap();

// answerAge(doc): how many seconds old a kept answer api() returned is,
// or null for one computed for its request.
export function answerAge(doc) {
	return doc && typeof doc === 'object' && ages.has(doc) ? ages.get(doc) : null;
}

// ageOf(resp): the Age header of a kept answer (seconds), or null.
function ageOf(resp) {
	const age = Number.parseInt(resp.headers.get('Age'), 10);
	return Number.isFinite(age) && age >= 0 ? age : null;
}

// answered(path, method, body): the server's response when it is a
// success. Throws ApiError on an HTTP error (401 also forgets the token)
// and Error when the server is unreachable.
async function answered(path, method, body) {
	const resp = await send(path, method, body);
	if (resp.status === 401) {
		clearToken();
		throw new ApiError(401, { reason: 'the token was rejected (revoked or mistyped): sign in again' }, path);
	}
	if (!resp.ok)
		throw await failure(resp, path);
	return resp;
}

// api(path, {method, body, text}): the parsed JSON answer (or the text when
// text is set). Throws as answered() does.
export async function api(path, { method = 'GET', body, text = false } = {}) {
	const resp = await answered(path, method, body);
	if (text)
		return resp.text();
	const doc = await resp.json();
	const age = ageOf(resp);
	if (doc && typeof doc === 'object' && age !== null)
		ages.set(doc, age);
	return doc;
}

// apiText(path): {text, age} of a GET whose answer is text: age as
// answerAge() says it of JSON (null: computed for this request).
export async function apiText(path) {
	const resp = await answered(path, 'GET');
	return { text: await resp.text(), age: ageOf(resp) };
}

// download(path, filename): fetch path with the token and hand it to the
// browser as a file download. A plain link cannot carry the header.
export async function download(path, filename) {
	const blob = new Blob([await api(path, { text: true })], { type: 'application/octet-stream' });
	saveBlob(blob, filename);
}

// saveBlob(blob, filename): offer blob as a download named filename.
export function saveBlob(blob, filename) {
	const a = document.createElement('a');
	a.href = URL.createObjectURL(blob);
	a.download = filename;
	document.body.append(a);
	a.click();
	a.remove();
	// Revoked later, not at once: the download may still be reading it.
	setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}
