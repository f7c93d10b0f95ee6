// SPDX-License-Identifier: MIT
// The fleet view: every host over the chart's range, one row each, for one
// vital (api/v1/fleet: all hosts in one call): a heat map on one canvas
// (columns are slots), each host's total, its ratio to the fleet's median and
// its findings, the most divergent hosts first.  A click on a cell opens that
// host's epoch of that slot in the epoch view.

import {h, report, weight, time, at} from './util.js';
import {set} from './state.js';
import * as api from './api.js';

const ROW = 16;         // CSS px per host
const AXIS = 22;        // CSS px of the time axis above the rows
const CLAMP = 2;        // |log2(value / median)| at full colour: 4x or 1/4
const MISSING = 1;      // the divergence a slot without an epoch counts for
let gen = 0;
let map = null;         // what is drawn: {rows, cols, med, step, unit, vital, host, found}
let resizing = null;

// Colour: the host's value against the fleet's median of the same slot, on a
// log scale, red above and blue below.  Against the slot's median, not
// normalized per row: what every host does at once (a deploy, the nightly
// batch) cancels out and only a host unlike its peers is coloured (Kasick et
// al.'s peer comparison), and a host doing twice the work of the others all
// along shows as a red row where per-row normalization would paint it like
// every other.  sqrt so that a 20% difference is already a visible tint.
function shade(rel) {
	if (rel == null)
		return '#d9d9d9';
	const d = Math.max(-CLAMP, Math.min(CLAMP, rel)) / CLAMP;
	const t = Math.sqrt(Math.abs(d));
	const to = d > 0 ? [178, 24, 43] : [33, 102, 172], from = [247, 247, 247];
	const c = from.map((f, i) => Math.round(f + (to[i] - f) * t));
	return `rgb(${c[0]},${c[1]},${c[2]})`;
}

function median(xs) {
	if (!xs.length)
		return null;
	const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
	return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// Slots of every host into columns of the timescale's step (epochs of hosts
// whose clocks start them a few seconds apart share a column), the medians,
// and one row per host with its cells, total, ratio and divergence.
function model(fleet) {
	const step = fleet.timescale_s * 1e9;
	const hosts = new Map(), buckets = new Set();
	for (const f of fleet.hosts) {
		const m = new Map();
		hosts.set(f.host, m);
		f.start_ns.forEach((start, j) => {
			const b = Math.floor(start / step), v = f.wsum[j], c = m.get(b);
			buckets.add(b);
			if (c) {
				c.v += v;
				c.end = Math.max(c.end, start + step);
			} else {
				m.set(b, {v, start, end: start + step});
			}
		});
	}
	const cols = [...buckets].sort((a, b) => a - b);
	const grid = [...hosts].map(([host, m]) => ({host, cells: cols.map((b) => m.get(b) || null)}));
	const med = cols.map((b, i) => median(grid.filter((r) => r.cells[i]).map((r) => r.cells[i].v)));
	// a floor under the ratios, so that 0 against 0 is 1 and 5 against 0 finite
	const eps = Math.max(1e-9, 1e-3 * (median(med.filter((x) => x != null)) || 0));
	const totals = grid.map((r) => r.cells.reduce((a, c) => a + (c ? c.v : 0), 0));
	const mid = median(totals);
	const rows = grid.map((r, k) => {
		const rel = r.cells.map((c, i) => c ? Math.log2((c.v + eps) / (med[i] + eps)) : null);
		const dev = rel.reduce((a, x) => a + (x == null ? MISSING : Math.min(CLAMP, Math.abs(x))), 0);
		return {host: r.host, cells: r.cells, rel, total: totals[k],
		    ratio: mid ? totals[k] / mid : totals[k] ? Infinity : 1,
		    missing: rel.filter((x) => x == null).length,
		    score: cols.length ? dev / cols.length : 0, findings: []};
	});
	// the most divergent first; a host off by as much in total breaks a tie
	rows.sort((a, b) => b.score - a.score ||
	    Math.abs(Math.log(b.ratio || 1e-9)) - Math.abs(Math.log(a.ratio || 1e-9)) ||
	    a.host.localeCompare(b.host, undefined, {numeric: true}));
	return {rows, cols: cols.map((b) => b * step), med, step};
}

// The vital shown: the one asked if the range has it, else cpu, else the first.
function pickVital(st, vitals) {
	const names = vitals ? vitals.map((v) => v.name) : [];
	if (!names.length || names.includes(st.hv))
		return st.hv;
	return names.includes('cpu') ? 'cpu' : names[0];
}

export async function render(st, el, vitals) {
	const my = ++gen;
	const vital = pickVital(st, vitals);
	const names = vitals ? vitals.map((v) => v.name) : [vital];
	// every host, unless the host field names several
	const q = {from: st.from, to: st.to, timescale: st.ts,
	    host: st.host.includes(',') ? st.host : ''};
	el.replaceChildren(
	    h('div', {class: 'toolbar'},
		h('label', {}, 'vital ', h('select', {id: 'fleet-vital',
		    onchange: (e) => set({hv: e.target.value})},
		    names.map((n) => h('option', {value: n, selected: n === vital}, n)))),
		h('span', {class: 'fleet-key'}, '¼× ', h('span', {class: 'fleet-ramp'}), ' 4× ',
		    h('span', {class: 'dim'}, 'of the fleet’s median of the slot; grey: no epoch')),
		h('span', {class: 'dim'}, 'most divergent hosts first; click a cell for its epoch')),
	    h('div', {class: 'fleet-sum dim'}, '…'),
	    h('div', {class: 'fleet-grid'},
		h('div', {id: 'fleet-rows'}),
		h('div', {class: 'fleet-map-box'}, h('canvas', {id: 'fleet-map'}))));
	delete el.dataset.findings;
	el.classList.add('loading');
	let fleet;
	try {
		fleet = await api.get('fleet', {...q, vital});
	} catch (e) {
		if (my !== gen)
			return;
		el.classList.remove('loading');
		report('fleet', e);
		el.querySelector('.fleet-sum').textContent = 'No fleet view (see above).';
		return;
	}
	if (my !== gen)
		return;
	report('fleet', null);
	el.classList.remove('loading');
	const t0 = performance.now();
	map = {...model(fleet), unit: fleet.unit, vital, host: st.host};
	draw(el);
	el.dataset.drawMs = (performance.now() - t0).toFixed(1);
	el.dataset.loads = +(el.dataset.loads || 0) + 1;
	if (!resizing)
		window.addEventListener('resize', resizing = () => map && draw(document.getElementById('fleet')));
	try {
		const found = await api.get('findings', q);
		if (my !== gen)
			return;
		report('fleet-findings', null);
		addFindings(el, found.findings);
	} catch (e) {
		if (my === gen)
			report('fleet-findings', e);
	}
}

// The rows' names, totals, ratios and findings (DOM, one line per host), and
// the heat map beside them (one canvas for all cells).
function draw(el) {
	const {rows, cols} = map;
	el.querySelector('.fleet-sum').textContent = rows.length ?
	    `${rows.length} host${rows.length === 1 ? '' : 's'} × ${cols.length} slots of ` +
	    `${map.step / 60e9 >= 1 ? `${map.step / 60e9} min` : `${map.step / 1e9} s`} · ${map.vital}` :
	    'No epochs stored in this range.';
	const list = el.querySelector('#fleet-rows');
	list.replaceChildren(h('div', {class: 'fhead dim', style: `height:${AXIS}px`},
	    h('span', {}, 'host'), h('span', {class: 'num'}, 'total'),
	    h('span', {class: 'num', title: 'its total against the median of the hosts\' totals'}, '/median'),
	    h('span', {title: `its findings of ${map.vital}`}, 'found')),
	    ...rows.map((r, i) => h('div', {class: 'frow' + (r.host === map.host ? ' on' : ''),
	    dataset: {host: r.host, row: i},
	    title: `divergence ${r.score.toFixed(2)}: the mean |log2| of its slots against the fleet's ` +
		`median${r.missing ? `; ${r.missing} slots without an epoch` : ''}`},
	    h('a', {class: 'fhost', href: '#', onclick: (e) => (e.preventDefault(), set({host: r.host}))},
		r.host),
	    h('span', {class: 'num'}, weight(r.total, map.unit)),
	    h('span', {class: 'num fratio' + (r.ratio > 1.25 ? ' hi' : r.ratio < 0.8 ? ' lo' : '')},
		Number.isFinite(r.ratio) ? `×${r.ratio.toFixed(2)}` : '×∞'),
	    findingCount(r))));
	paint(el);
}

// A row's findings: their count, coloured by the worst (none until loaded).
function findingCount(r) {
	if (!map.found)
		return h('span', {class: 'ffind'});
	const worst = r.findings.reduce((a, f) => RANK[f.severity] > RANK[a] ? f.severity : a, 'info');
	return h('span', {class: 'ffind', dataset: {count: r.findings.length}}, r.findings.length ?
	    h('span', {class: `sev sev-${worst}`,
		title: `${r.findings.length} findings of ${map.vital}, the worst ${worst}`},
		r.findings.length) : '');
}

function paint(el) {
	const {rows, cols} = map;
	const c = el.querySelector('#fleet-map');
	const box = c.parentElement;
	const w = Math.max(200, box.clientWidth), hgt = AXIS + rows.length * ROW;
	const dpr = devicePixelRatio || 1;
	c.width = Math.round(w * dpr);
	c.height = Math.round(hgt * dpr);
	c.style.width = `${w}px`;
	c.style.height = `${hgt}px`;
	Object.assign(c.dataset, {rows: rows.length, cols: cols.length, axis: AXIS, rowHeight: ROW});
	const ctx = c.getContext('2d');
	ctx.scale(dpr, dpr);
	ctx.clearRect(0, 0, w, hgt);
	const x = (i) => Math.round(i * w / Math.max(1, cols.length));
	rows.forEach((r, k) => {
		const y = AXIS + k * ROW;
		for (let i = 0; i < cols.length; i++) {
			ctx.fillStyle = shade(r.rel[i]);
			ctx.fillRect(x(i), y, Math.max(1, x(i + 1) - x(i)), ROW - 1);
		}
	});
	axis(ctx, w, x);
	marks(ctx, x);
	hover(c, x);
}

// Times along the top, one label per 90 px or so.
function axis(ctx, w, x) {
	const {cols} = map;
	ctx.fillStyle = '#444';
	ctx.strokeStyle = '#999';
	ctx.font = '11px system-ui, sans-serif';
	ctx.textBaseline = 'middle';
	const every = Math.max(1, Math.ceil(cols.length * 90 / w));
	let day = null;
	for (let i = 0; i < cols.length; i += every) {
		const t = time(cols[i]), d = t.slice(0, 10);
		const label = d !== day ? `${t.slice(11, 16)} ${d.slice(5)}` : t.slice(11, 16);
		day = d;
		ctx.fillRect(x(i), AXIS - 5, 1, 5);
		if (x(i) + ctx.measureText(label).width < w)
			ctx.fillText(label, x(i) + 2, AXIS / 2 - 2);
	}
}

// A finding: a small triangle in the corner of its host's cell, coloured by
// severity.
const SEV = {info: '#5b7fa6', warn: '#d98c00', crit: '#c62828'};
const RANK = {info: 0, warn: 1, crit: 2};

function marks(ctx, x) {
	const {rows, cols, step} = map;
	const col = new Map(cols.map((t, i) => [t, i]));
	rows.forEach((r, k) => {
		for (const f of r.findings) {
			const i = col.get(Math.floor(f.start_ns / step) * step);
			if (i == null)
				continue;
			const y = AXIS + k * ROW;
			ctx.fillStyle = SEV[f.severity] || SEV.info;
			ctx.beginPath();
			ctx.moveTo(x(i), y);
			ctx.lineTo(x(i) + 7, y);
			ctx.lineTo(x(i), y + 7);
			ctx.fill();
		}
	});
}

// The findings of the vital shown, on their hosts' rows.
function addFindings(el, findings) {
	const by = new Map(map.rows.map((r) => [r.host, r]));
	findings = findings.filter((f) => f.vital === map.vital && by.has(f.host));
	for (const r of map.rows)
		r.findings = [];
	for (const f of findings)
		by.get(f.host).findings.push(f);
	map.found = true;
	draw(el);
	el.dataset.findings = findings.length;
}

// The cell under the pointer: its row and column, or null.
function cellAt(c, e, x) {
	const r = c.getBoundingClientRect();
	const px = e.clientX - r.left, py = e.clientY - r.top - AXIS;
	const k = Math.floor(py / ROW);
	if (py < 0 || k >= map.rows.length)
		return null;
	let i = Math.floor(px * map.cols.length / r.width);
	while (i > 0 && x(i) > px)
		i--;
	return i >= 0 && i < map.cols.length ? {row: map.rows[k], i} : null;
}

function hover(c, x) {
	c.onmousemove = (e) => {
		const a = cellAt(c, e, x);
		c.style.cursor = a && a.row.cells[a.i] ? 'pointer' : 'default';
		tip(a, e);
	};
	c.onmouseleave = () => tip(null);
	c.onclick = (e) => {
		const a = cellAt(c, e, x), cell = a && a.row.cells[a.i];
		if (!cell)
			return;
		tip(null);
		set({host: a.row.host, sel: `${at(cell.start)}..${at(cell.end)}`,
		    eid: '', ehost: a.row.host, view: 'epoch'});
	};
}

function tip(a, e) {
	const t = document.getElementById('tip');
	if (!a) {
		t.hidden = true;
		return;
	}
	const {row, i} = a, cell = row.cells[i], med = map.med[i];
	const fs = row.findings.filter((f) => Math.floor(f.start_ns / map.step) * map.step === map.cols[i]);
	t.replaceChildren(
	    h('div', {}, h('b', {}, row.host), ` · ${time(map.cols[i])}`),
	    h('div', {}, cell ? `${map.vital} ${weight(cell.v, map.unit)}, the fleet’s median ` +
		`${weight(med, map.unit)} (×${(2 ** row.rel[i]).toFixed(2)})` : 'no epoch'),
	    fs.map((f) => h('div', {class: 'tip-line'}, h('span', {class: `sev sev-${f.severity}`},
		f.severity), ' ', f.text)));
	t.hidden = false;
	t.style.left = `${Math.max(4, Math.min(e.pageX + 12, innerWidth - t.offsetWidth - 8))}px`;
	t.style.top = `${e.pageY + 14}px`;
}
