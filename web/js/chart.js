// SPDX-License-Identifier: MIT
// The time-series view: the vitals of the range (api/v1/series) as uPlot line
// charts, overlaid on one normalized axis or stacked one per vital, with the
// findings as marks on the time axis.  A drag reports a range, a click a slot.

import {h, report, color, weight, weightShort, time, range, duration, pct} from './util.js';
import * as api from './api.js';

let data = null;    // the last answer, slots of every host merged by start
let plots = [];     // [{u, height}]
let hooks = {};     // onRange(fromNs, toNs), onSlot(slot), onVitals(list), toNewest()
let bands = {};     // name -> [fromNs, toNs] (or [ns] for a line)
let gen = 0, loads = 0;

export function init(h) {
	hooks = h;
	let t = null;
	window.addEventListener('resize', () => {
		clearTimeout(t);
		t = setTimeout(resize, 100);
	});
}

// Fetch the series and findings of st's range, then draw.
export async function load(st) {
	const my = ++gen, el = document.getElementById('chart');
	el.classList.add('loading');
	const q = {from: st.from, to: st.to, host: st.host, timescale: st.ts};
	try {
		const [series, found] = await Promise.all([api.get('series', {...q, top: 0}),
		    api.get('findings', q).catch((e) => (report('findings', e), null))]);
		if (my !== gen)
			return;
		report('series', null);
		if (found)
			report('findings', null);
		data = merge(series, found ? found.findings : []);
		el.dataset.loads = ++loads;
		el.dataset.fromNs = data.fromNs;
		el.dataset.toNs = data.toNs;
	} catch (e) {
		if (my !== gen)
			return;
		report('series', e);
		data = null;
	} finally {
		if (my === gen)
			el.classList.remove('loading');
	}
	draw(st);
	if (data && my === gen)
		addTops(my, q);
}

// The heaviest exe of each slot, for the legend, once the chart is drawn:
// naming a slot's exes reads its epoch, much slower than its totals.
async function addTops(my, q) {
	let series;
	try {
		series = await api.get('series', {...q, top: 1});
	} catch (e) {
		return; /* the legend goes without; the chart is there */
	}
	if (my !== gen || !data)
		return;
	const by = new Map(merge(series, []).at.filter(Boolean).map((s) => [s.start_ns, s]));
	for (const s of data.at) {
		const t = s && by.get(s.start_ns);
		for (const [v, x] of Object.entries(t ? t.vitals : {}))
			if (s.vitals[v])
				Object.assign(s.vitals[v], {top: x.top, topw: x.topw});
	}
}

// Slots of all hosts summed per start; a null slot where epochs are missing.
function merge(series, findings) {
	const by = new Map();
	for (const s of series.slots) {
		let m = by.get(s.start_ns);
		if (!m)
			by.set(s.start_ns, m = {start_ns: s.start_ns, length_ns: s.length_ns,
			    epochs: 0, hosts: [], vitals: {}});
		m.epochs += s.epochs;
		m.hosts.push(s.host);
		for (const [v, x] of Object.entries(s.vitals)) {
			const t = m.vitals[v] || (m.vitals[v] = {events: 0, wsum: 0, top: null, topw: 0});
			t.events += x.events;
			t.wsum += x.wsum;
			// the heaviest exe of any host, for the legend
			const top = x.top && x.top[0];
			if (top && top.share * x.wsum > t.topw) {
				t.top = top;
				t.topw = top.share * x.wsum;
			}
		}
	}
	const slots = [...by.values()].sort((a, b) => a.start_ns - b.start_ns);
	const step = series.timescale_s * 1e9, at = [];
	for (const s of slots) {
		const prev = at[at.length - 1];
		if (prev && s.start_ns - prev.start_ns > 1.5 * step)
			at.push(null);
		at.push(s);
	}
	const x = at.map((s, i) => s ? s.start_ns / 1e9 :
	    at[i - 1].start_ns / 1e9 + series.timescale_s);
	return {fromNs: series.from_ns, toNs: series.to_ns, tsS: series.timescale_s,
	    vitals: series.vitals, at, x, findings};
}

function shown(st) {
	if (!data)
		return [];
	const want = st.vitals ? st.vitals.split(',') : null;
	return data.vitals.filter((v) => !want || want.includes(v.name));
}

// The vitals check boxes, the range line and the charts.
export function draw(st) {
	for (const p of plots)
		p.u.destroy();
	plots = [];
	const el = document.getElementById('chart');
	el.replaceChildren();
	drawControls(st);
	const vs = shown(st);
	el.dataset.lines = vs.map((v) => v.name).join(',');
	el.dataset.mode = st.mode;
	if (!data) {
		el.append(h('div', {class: 'empty'}, 'No chart: the series could not be read (see above).'));
		return;
	}
	if (!data.at.length) {
		el.append(h('div', {class: 'empty'}, 'No epochs stored in this range. ',
		    h('button', {type: 'button', id: 'to-newest', onclick: hooks.toNewest},
			'show the newest hour stored')));
		return;
	}
	if (st.mode === 'stacked')
		vs.forEach((v, i) => plot(el, [v], false, i === vs.length - 1));
	else if (vs.length)
		plot(el, vs, true, true);
}

function drawControls(st) {
	const list = document.getElementById('vital-list');
	const vs = data ? data.vitals : [];
	const on = new Set(shown(st).map((v) => v.name));
	list.replaceChildren(...vs.map((v) => h('label', {class: 'vital', title: `unit: ${v.unit}`},
	    h('input', {type: 'checkbox', value: v.name, checked: on.has(v.name),
		onchange: () => {
			const on = [...list.querySelectorAll('input:checked')].map((i) => i.value);
			hooks.onVitals(on.length === vs.length ? '' : on.join(',') || 'none');
		}}),
	    h('span', {class: 'swatch', style: `background:${color(v.name)}`}), v.name)));
	const label = document.getElementById('range-label');
	if (!data) {
		label.textContent = '';
		return;
	}
	const n = data.findings.length, crit = data.findings.filter((f) => f.severity === 'crit').length;
	label.textContent = `${range(data.fromNs, data.toNs)} · ${data.at.filter(Boolean).length} ` +
	    `slots of ${duration(data.tsS * 1e9)} · ${n} finding${n === 1 ? '' : 's'}` +
	    (crit ? ` (${crit} crit)` : '');
}

// One uPlot: several vitals normalized (overlay), or one in its unit (stacked,
// where only the last chart has the time axis's labels).
function plot(el, vitals, normalized, last) {
	const box = h('div', {class: normalized ? 'plot' : 'plot stacked',
	    dataset: {vitals: vitals.map((v) => v.name).join(',')}});
	el.append(box);
	const raw = vitals.map((v) => data.at.map((s) => s && s.vitals[v.name] ? s.vitals[v.name].wsum : null));
	const max = raw.map((a) => Math.max(0, ...a.filter((x) => x != null)) || 1);
	const ys = normalized ? raw.map((a, i) => a.map((x) => x == null ? null : x / max[i])) : raw;
	const unit = vitals[0].unit;
	const height = normalized ? 280 : last ? 110 : 80;
	const u = new uPlot({
		width: el.clientWidth, height,
		padding: normalized ? null : [18, 24, last ? null : 2, null],
		cursor: {drag: {x: true, y: false, setScale: false, dist: 5}, sync: {key: 'vitals'}},
		legend: {show: true, live: true},
		scales: {x: {time: true}, y: {range: normalized ? [0, 1.08] : (u, lo, hi) => [0, (hi || 1) * 1.1]}},
		axes: [
			last ? {stroke: '#444', grid: {stroke: '#eee'}, ticks: {stroke: '#ccc'}, values: ticks} :
			    {grid: {stroke: '#eee'}, ticks: {show: false}, size: 4, values: (u, s) => s.map(() => '')},
			normalized ?
			    {stroke: '#444', grid: {stroke: '#eee'}, size: 44, values: (u, s) => s.map((v) => v.toFixed(1))} :
			    {stroke: '#444', grid: {stroke: '#eee'}, size: 74, space: 18,
				values: (u, s) => s.map((v) => weightShort(v, unit))},
		],
		series: [
			{label: 'time', value: (u, v) => v == null ? '–' : time(v * 1e9)},
			...vitals.map((v, i) => ({
				label: v.name, stroke: color(v.name), width: 1.5,
				value: (u, val, si, idx) => idx == null ? '–' :
				    weight(raw[i][idx], v.unit) + (normalized ? '' : topExe(idx, v.name)),
			})),
		],
		hooks: {
			setSelect: [selected],
			drawClear: [drawBands],
			draw: [(u) => placeMarks(u, normalized ? null : vitals[0].name)],
			ready: [clicks],
		},
	}, [data.x, ...ys], box);
	plots.push({u, height});
}

// ', mostly nginx (41%)' for the slot at idx.
function topExe(idx, vital) {
	const s = data.at[idx], v = s && s.vitals[vital];
	if (!v || !v.top || !v.wsum)
		return '';
	return `, mostly ${v.top.exe.slice(v.top.exe.lastIndexOf('/') + 1)} (${pct(v.topw / v.wsum)})`;
}

// Time ticks in local time, 24 h, with the date under the first tick of a day.
function ticks(u, splits, axis, space, incr) {
	let day = null;
	return splits.map((s) => {
		const t = time(s * 1e9), d = t.slice(0, 10);
		if (incr >= 86400)
			return d;
		const label = incr < 60 ? t.slice(11) : t.slice(11, 16);
		const first = d !== day;
		day = d;
		return first ? `${label}\n${d}` : label;
	});
}

// A drag over the chart: report its range, rounded to seconds.
function selected(u) {
	const {left, width} = u.select;
	if (width < 5)
		return;
	const f = u.posToVal(left, 'x'), t = u.posToVal(left + width, 'x');
	u.setSelect({left: 0, top: 0, width: 0, height: 0}, false);
	hooks.onRange(Math.round(f) * 1e9, Math.round(t) * 1e9);
}

// A click without a drag: the slot under the cursor.
function clicks(u) {
	let down = null;
	u.over.addEventListener('mousedown', (e) => {
		down = e.clientX;
	});
	u.over.addEventListener('mouseup', (e) => {
		const click = down != null && Math.abs(e.clientX - down) < 5;
		down = null;
		const idx = u.cursor.idx;
		if (click && idx != null && data.at[idx])
			hooks.onSlot(data.at[idx]);
	});
}

export function slotAt(ns) {
	return data && data.at.find((s) => s && s.start_ns <= ns && ns < s.start_ns + s.length_ns);
}

// Bands behind the lines: the selected slot, ranges A and B, the asked time.
const BAND = {sel: ['rgba(255,200,0,.25)', ''], a: ['rgba(31,119,180,.13)', 'A'],
    b: ['rgba(255,127,14,.16)', 'B'], at: ['rgba(0,0,0,.6)', 'T'],
    pick: ['rgba(31,119,180,.13)', 'A']};

export function setBands(b) {
	bands = {...bands, ...b};
	for (const p of plots)
		p.u.redraw(false, false);
}

function drawBands(u) {
	const ctx = u.ctx, {left, top, width, height} = u.bbox;
	ctx.save();
	ctx.font = `${11 * devicePixelRatio}px sans-serif`;
	for (const [name, r] of Object.entries(bands)) {
		if (!r || !BAND[name])
			continue;
		let x0 = u.valToPos(r[0] / 1e9, 'x', true);
		let x1 = r.length > 1 ? u.valToPos(r[1] / 1e9, 'x', true) : x0 + devicePixelRatio;
		if (x1 <= left || x0 >= left + width)
			continue;
		x0 = Math.max(x0, left);
		x1 = Math.min(Math.max(x1, x0 + 2 * devicePixelRatio), left + width);
		ctx.fillStyle = BAND[name][0];
		ctx.fillRect(x0, top, x1 - x0, height);
		if (BAND[name][1]) {
			ctx.fillStyle = '#555';
			ctx.fillText(BAND[name][1], x0 + 3 * devicePixelRatio, top + 12 * devicePixelRatio);
		}
	}
	ctx.restore();
}

// Findings as marks along the bottom of the plot, grouped per pixel column,
// coloured by their worst severity; their sentences on hover.
const RANK = {info: 0, warn: 1, crit: 2};

function placeMarks(u, vital) {
	for (const m of u.over.querySelectorAll('.fmark'))
		m.remove();
	const groups = new Map();
	const [lo, hi] = [u.scales.x.min, u.scales.x.max];
	for (const f of data.findings) {
		const t = f.start_ns / 1e9;
		if ((vital && f.vital !== vital) || t < lo || t > hi)
			continue;
		const x = Math.round(u.valToPos(t, 'x') / 6) * 6;
		if (!groups.has(x))
			groups.set(x, []);
		groups.get(x).push(f);
	}
	for (const [x, fs] of groups) {
		const worst = fs.reduce((a, f) => RANK[f.severity] > RANK[a] ? f.severity : a, 'info');
		const m = h('div', {class: 'fmark', style: `left:${x - 5}px`,
		    dataset: {severity: worst, count: fs.length}});
		m.addEventListener('mouseenter', () => tip(m, fs));
		m.addEventListener('mouseleave', () => tip(null));
		m.addEventListener('mousedown', (e) => e.stopPropagation());
		m.addEventListener('click', () => {
			const s = slotAt(fs[0].start_ns);
			if (s)
				hooks.onSlot(s);
		});
		u.over.append(m);
	}
}

function tip(mark, findings) {
	const t = document.getElementById('tip');
	if (!mark) {
		t.hidden = true;
		return;
	}
	t.replaceChildren(...findings.map((f) => h('div', {class: 'tip-line'},
	    h('span', {class: `sev sev-${f.severity}`}, f.severity), ' ',
	    h('span', {class: 'dim'}, `${time(f.start_ns)} ${f.host || ''} `), f.text)));
	t.hidden = false;
	const r = mark.getBoundingClientRect();
	t.style.left = `${Math.max(4, Math.min(r.left + scrollX - 20, innerWidth - t.offsetWidth - 8))}px`;
	t.style.top = `${r.bottom + scrollY + 6}px`;
}

function resize() {
	const el = document.getElementById('chart');
	for (const p of plots)
		p.u.setSize({width: el.clientWidth, height: p.height});
}

// The vitals of the current range, [{name, unit}].
export function vitals() {
	return data ? data.vitals : null;
}

// The range of the current data, for zooming out.
export function loaded() {
	return data ? [data.fromNs, data.toNs] : null;
}
