// SPDX-License-Identifier: MIT
// Small helpers shared by the views: building DOM nodes, the message bar,
// and formatting times (browser's local time), durations and weights in a
// vital's unit.

// h('div', {class: 'x', onclick: f}, child, 'text', ...): one element.
export function h(tag, attrs, ...children) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v == null || v === false)
			continue;
		if (k.startsWith('on'))
			e.addEventListener(k.slice(2), v);
		else if (k === 'dataset')
			Object.assign(e.dataset, v);
		else
			e.setAttribute(k, v === true ? '' : v);
	}
	for (const c of children.flat())
		if (c != null && c !== false)
			e.append(c instanceof Node ? c : String(c));
	return e;
}

// The message bar: one line per source ('series', 'flame', ...) in error.
const messages = new Map();

export function report(source, err) {
	if (err == null)
		messages.delete(source);
	else
		messages.set(source, err.message || String(err));
	const bar = document.getElementById('msg');
	bar.replaceChildren(...[...messages].map(([s, m]) =>
	    h('div', {class: 'msg-line', dataset: {source: s}}, m)));
	bar.hidden = messages.size === 0;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

// 2026-11-25 17:05:00 in local time (seconds left off when zero and !full).
export function time(ns, full = true) {
	const d = new Date(ns / 1e6);
	const s = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
	    `${pad(d.getHours())}:${pad(d.getMinutes())}`;
	return full || d.getSeconds() ? `${s}:${pad(d.getSeconds())}` : s;
}

// 17:05:00 alone when a and b are on the same day, for ranges.
export function range(fromNs, toNs) {
	const a = time(fromNs, false), b = time(toNs, false);
	const end = a.slice(0, 10) === b.slice(0, 10) ? b.slice(11) : b;
	return `${a} – ${end} (${duration(toNs - fromNs)})`;
}

// 1 d 2 h, 5 min 30 s, 1.25 s, 300 ms ...
export function duration(ns) {
	const s = ns / 1e9;
	if (s < 1)
		return unitNs(ns);
	const parts = [], units = [[86400, 'd'], [3600, 'h'], [60, 'min'], [1, 's']];
	let rest = Math.round(s);
	for (const [n, u] of units) {
		if (rest >= n) {
			parts.push(`${Math.floor(rest / n)} ${u}`);
			rest %= n;
		}
		if (parts.length === 2)
			break;
	}
	return parts.join(' ');
}

function num(v, digits = 3) {
	if (v === 0)
		return '0';
	const a = Math.abs(v);
	return a >= 100 ? v.toFixed(0) : v.toPrecision(digits).replace(/\.?0+$/, '');
}

function unitNs(v) {
	const a = Math.abs(v);
	if (a >= 1e9)
		return `${num(v / 1e9)} s`;
	if (a >= 1e6)
		return `${num(v / 1e6)} ms`;
	if (a >= 1e3)
		return `${num(v / 1e3)} µs`;
	return `${num(v)} ns`;
}

function unitBytes(v) {
	const names = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
	let i = 0;
	while (Math.abs(v) >= 1024 && i < names.length - 1) {
		v /= 1024;
		i++;
	}
	return `${num(v)} ${names[i]}`;
}

// A count with k/M/G, then the unit's name.
function unitCount(v, unit) {
	const a = Math.abs(v);
	const s = a >= 1e9 ? `${num(v / 1e9)}G` : a >= 1e6 ? `${num(v / 1e6)}M` :
	    a >= 1e4 ? `${num(v / 1e3)}k` : num(v);
	return unit ? `${s} ${unit}` : s;
}

// A weight in a vital's unit: ns as ns/µs/ms/s, bytes as B/KiB/MiB, others counted.
export function weight(v, unit) {
	if (v == null || Number.isNaN(v))
		return '–';
	if (unit === 'ns')
		return unitNs(v);
	if (unit === 'bytes')
		return unitBytes(v);
	return unitCount(v, unit);
}

// The same without the name of a counted unit, for axis ticks.
export function weightShort(v, unit) {
	return unit === 'ns' || unit === 'bytes' ? weight(v, unit) : unitCount(v, '');
}

export function pct(share) {
	return share >= 0.1 ? `${(share * 100).toFixed(0)}%` :
	    `${(share * 100).toFixed(1)}%`;
}

// Times the page writes into the URL and sends: '@UNIXSECONDS', read the same
// by the server in any time zone.  Rounded down: a range [from, to) holds the
// epochs starting in it, so '@floor(start)..@floor(end)' names one slot even
// when epochs start between seconds.
export function at(ns) {
	return '@' + Math.floor(ns / 1e9);
}

// ns of an '@SECONDS' or bare-nanoseconds form, else NaN.
export function atNs(s) {
	if (/^@\d+$/.test(s))
		return Number(s.slice(1)) * 1e9;
	if (/^\d{13,}$/.test(s))
		return Number(s);
	return NaN;
}

// What a time field shows for a time in the state: '@S' as the local
// '2026-11-25 17:05:30'; other forms (-1h, now, ...) as they are.
export function showTime(s) {
	const ns = atNs(s);
	return Number.isFinite(ns) ? time(ns) : s;
}

// And back: a local time written as shown (a space between date and time)
// becomes '@S'; any other form goes to the server as typed (the CLI's forms).
export function readTime(text) {
	const m = text.trim().match(/^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d)(?::(\d\d))?$/);
	if (!m)
		return text.trim();
	return at(new Date(+m[1], m[2] - 1, +m[3], +m[4], +m[5], +(m[6] || 0)).getTime() * 1e6);
}

export function showPair(s) {
	const p = pair(s);
	return p ? p.map(showTime).join(' .. ') : s;
}

export function readPair(text) {
	const p = pair(text);
	return p ? p.map(readTime).join('..') : text.trim();
}

// 'FROM..TO' into [from, to] strings.
export function pair(s) {
	const i = (s || '').indexOf('..');
	return i < 0 ? null : [s.slice(0, i), s.slice(i + 2)];
}

// 2026-11-25T17:05 in local time, as the CLI reads a time.
export function localInput(ns) {
	const d = new Date(ns / 1e6);
	return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T` +
	    `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// One colour per vital, the same in every view.
const COLORS = {
	cpu: '#d62728', sched: '#1f77b4', blocking: '#9467bd', diskio: '#8c564b',
	kmem: '#e377c2', umem: '#17becf', syscall: '#2ca02c', signal: '#ff7f0e',
	socket: '#bcbd22', lock: '#393b79',
};
const SPARE = ['#7f7f7f', '#637939', '#843c39', '#3182bd', '#e6550d'];

export function color(vital) {
	if (!COLORS[vital])
		COLORS[vital] = SPARE[Object.keys(COLORS).length % SPARE.length];
	return COLORS[vital];
}
