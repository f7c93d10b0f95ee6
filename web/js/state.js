// SPDX-License-Identifier: MIT
// The page's state, kept in the URL's hash (#from=-6h&view=flame...) so a link
// opens the same view: set() writes it with pushState or replaceState, and
// back, forward or an edited URL reads it again and tells the listeners.

const DEFAULTS = {
	from: '-1h', to: 'now',  // the chart's range, in any form the API reads
	host: '',                // '' is every host
	vitals: '',              // the vitals shown, comma list; '' is all
	ts: 'base',              // timescale
	mode: 'overlay',         // overlay (normalized) or stacked
	view: 'flame',           // the panel under the chart: epoch, flame, compare, fleet
	sel: '',                 // the slot clicked on: '@START..@END'
	eid: '', ehost: '',      // the epoch of that slot shown (default: the heaviest)
	ev: '',                  // the vital whose samples the epoch view lists
	fv: 'cpu', exe: '',      // flame graph: vital and exe filter
	a: '', b: '', cv: 'cpu', // comparison: ranges 'FROM..TO' and vital
	at: '',                  // the time asked in the time box
	hv: 'cpu',               // the fleet's heat map: vital
};

export const state = read();
const listeners = [];

function read() {
	const p = new URLSearchParams(location.hash.slice(1));
	const s = {...DEFAULTS};
	for (const k of Object.keys(DEFAULTS))
		if (p.has(k))
			s[k] = p.get(k);
	return s;
}

function hash(s) {
	const p = new URLSearchParams();
	for (const [k, v] of Object.entries(s))
		if (v !== DEFAULTS[k])
			p.set(k, v);
	return '#' + p.toString().replaceAll('%2C', ',').replaceAll('%40', '@');
}

function changes(next) {
	const changed = new Set();
	for (const k of Object.keys(DEFAULTS))
		if (next[k] !== state[k])
			changed.add(k);
	Object.assign(state, next);
	return changed;
}

function notify(changed) {
	if (changed.size)
		for (const f of listeners)
			f(changed);
}

// Change some fields; a new history entry unless replace is set.
export function set(fields, replace = false) {
	const changed = changes({...state, ...fields});
	const url = hash(state);
	if (url !== (location.hash || '#'))
		history[replace ? 'replaceState' : 'pushState'](null, '',
		    url === '#' ? location.pathname + location.search : url);
	notify(changed);
}

// f(changedKeys) after every change, ours or the browser's.
export function onChange(f) {
	listeners.push(f);
}

export const ALL = new Set(Object.keys(DEFAULTS));

function reread() {
	notify(changes(read()));
}
window.addEventListener('popstate', reread);
window.addEventListener('hashchange', reread);
