// SPDX-License-Identifier: MIT
// The one module that talks to the server: GET api/v1/PATH?params, the JSON
// answer back, or an ApiError carrying the server's {"error", "param"}.
// URLs are relative, so the page works under any prefix.

export class ApiError extends Error {
	constructor(status, body, path) {
		const what = body && body.error ? body.error : `HTTP ${status}`;
		const param = body && body.param ? ` (parameter '${body.param}')` : '';
		super(`${path}: ${what}${param}` +
		    (status === 401 ? ' — open the page as ?token=TOKEN' : ''));
		this.status = status;
		this.param = body && body.param;
	}
}

// A token given as ?token=... in the page's own URL is sent as a bearer token.
const token = new URLSearchParams(location.search).get('token');

// Parameters that are null, undefined or '' are left out.
export async function get(path, params = {}) {
	const q = new URLSearchParams();
	for (const [k, v] of Object.entries(params))
		if (v != null && v !== '')
			q.set(k, v);
	const url = `api/v1/${path}${q.size ? '?' + q : ''}`;
	const headers = {Accept: 'application/json'};
	if (token)
		headers.Authorization = `Bearer ${token}`;
	let r;
	try {
		r = await fetch(url, {headers});
	} catch (e) {
		throw new ApiError(0, {error: `cannot reach the server (${e.message})`}, path);
	}
	let body = null;
	try {
		body = await r.json();
	} catch (e) {
		if (r.ok)
			throw new ApiError(r.status, {error: 'the answer is not JSON'}, path);
	}
	if (!r.ok)
		throw new ApiError(r.status, body, path);
	return body;
}
