// SPDX-License-Identifier: MIT
// Wires the page together: the range, host and timescale controls, the time
// box, picking ranges A and B on the chart, and which view shows under the
// chart; every change goes through the state in the URL and redraws from it.

import {state, set, onChange, ALL} from './state.js';
import {report, at, atNs, pair, localInput, showTime, readTime} from './util.js';
import * as api from './api.js';
import * as chart from './chart.js';
import * as epoch from './epoch.js';
import * as flame from './flame.js';
import * as compare from './compare.js';
import * as fleet from './fleet.js';

const $ = (s) => document.querySelector(s);
const MIN = 60e9;
let picking = null;     // while picking: {a: [fromNs, toNs] once A is dragged}
let vitals = null;      // [{name, unit}] of the current range

chart.init({
	onRange(f, t) {
		if (picking)
			pick(f, t);
		else
			set({from: at(f), to: at(t)});
	},
	onSlot(s) {
		if (!picking)
			set({sel: `${at(s.start_ns)}..${at(s.start_ns + s.length_ns)}`,
			    eid: '', ehost: '', view: 'epoch'});
	},
	onVitals(v) {
		set({vitals: v}, true);
	},
	async toNewest() {
		try {
			const r = await api.get('hosts');
			const hs = r.hosts.filter((x) => !state.host || state.host.split(',').includes(x.host));
			const last = Math.max(...hs.map((x) => x.last_ns));
			if (Number.isFinite(last))
				set({from: at(last - 60 * MIN), to: at(last + MIN)});
		} catch (e) {
			report('hosts', e);
		}
	},
});

function hint(text) {
	const e = $('#pick-hint');
	e.textContent = text || '';
	e.hidden = !text;
}

function startPick() {
	picking = {};
	chart.setBands({a: null, b: null});
	hint('Drag range A on the chart (Esc cancels).');
}

function pick(f, t) {
	if (!picking.a) {
		picking.a = [f, t];
		chart.setBands({pick: [f, t]});
		hint('Now drag range B.');
		return;
	}
	const a = picking.a;
	picking = null;
	hint(null);
	chart.setBands({pick: null});
	set({a: `${at(a[0])}..${at(a[1])}`, b: `${at(f)}..${at(t)}`, view: 'compare'});
}

// "What was this machine doing at T?": T-30m..T+30m, compared with the hour before.
async function ask(t) {
	try {
		const T = (await api.get('time', {t})).ns;
		report('time', null);
		set({at: t, from: at(T - 30 * MIN), to: at(T + 30 * MIN), sel: '', view: 'compare',
		    a: `${at(T - 90 * MIN)}..${at(T - 30 * MIN)}`, b: `${at(T - 30 * MIN)}..${at(T + 30 * MIN)}`});
	} catch (e) {
		report('time', e);
	}
}

async function markAt() {
	if (!state.at)
		return chart.setBands({at: null});
	try {
		chart.setBands({at: [(await api.get('time', {t: state.at})).ns]});
	} catch (e) {
		chart.setBands({at: null});
	}
}

async function loadHosts() {
	try {
		const r = await api.get('hosts');
		report('hosts', null);
		const sel = $('#host');
		for (const x of r.hosts)
			sel.append(new Option(x.host + (x.host === r.local ? ' (local)' : ''), x.host));
		sel.value = state.host;
		const last = Math.max(...r.hosts.map((x) => x.last_ns));
		if (Number.isFinite(last))
			$('#timebox-t').placeholder = localInput(last - 60 * MIN);
	} catch (e) {
		report('hosts', e);
	}
}

function syncControls() {
	$('#host').value = state.host;
	$('#from').value = showTime(state.from);
	$('#to').value = showTime(state.to);
	$('#timescale').value = state.ts;
	$('#timebox-t').value = state.at;
	for (const b of document.querySelectorAll('[data-mode]'))
		b.classList.toggle('on', b.dataset.mode === state.mode);
	for (const b of document.querySelectorAll('#views [data-view]'))
		b.classList.toggle('on', b.dataset.view === state.view);
	for (const v of document.querySelectorAll('section.view'))
		v.hidden = v.dataset.view !== state.view;
	const s = pair(state.sel);
	chart.setBands({sel: s && state.view === 'epoch' ? s.map(atNs) : null});
	if (state.view !== 'compare')
		chart.setBands({a: null, b: null});
}

async function render(ch) {
	const any = (...ks) => ks.some((k) => ch.has(k));
	syncControls();
	if (any('at'))
		markAt();
	if (any('from', 'to', 'host', 'ts')) {
		await chart.load(state);
		vitals = chart.vitals();
	} else if (any('vitals', 'mode')) {
		chart.draw(state);
	}
	const range = any('from', 'to', 'host', 'ts', 'view');
	if (state.view === 'epoch' && (range || any('sel', 'eid', 'ehost', 'ev')))
		epoch.render(state, $('#epoch-detail'));
	if (state.view === 'flame' && (range || any('fv', 'exe')))
		flame.render(state, $('#flame'), vitals);
	if (state.view === 'compare' && (range || any('a', 'b', 'cv')))
		compare.render(state, $('#compare'), vitals, {pick: startPick,
		    bands: (b) => state.view === 'compare' && chart.setBands(b)});
	if (state.view === 'fleet' && (range || any('hv')))
		fleet.render(state, $('#fleet'), vitals);
}

$('#range-form').addEventListener('submit', (e) => {
	e.preventDefault();
	set({from: readTime($('#from').value) || '-1h', to: readTime($('#to').value) || 'now'});
});
for (const b of document.querySelectorAll('[data-range]'))
	b.addEventListener('click', () => set({from: b.dataset.range, to: 'now'}));
$('#host').addEventListener('change', (e) => set({host: e.target.value, sel: '', eid: '', ehost: ''}));
$('#timescale').addEventListener('change', (e) => set({ts: e.target.value, sel: '', eid: ''}));
for (const b of document.querySelectorAll('[data-mode]'))
	b.addEventListener('click', () => set({mode: b.dataset.mode}, true));
for (const b of document.querySelectorAll('#views [data-view]'))
	b.addEventListener('click', () => set({view: b.dataset.view}));
$('#zoom-back').addEventListener('click', () => history.back());
$('#zoom-out').addEventListener('click', () => {
	const r = chart.loaded();
	if (!r)
		return;
	const span = r[1] - r[0];
	if (state.to === 'now')
		set({from: at(r[0] - span)});
	else
		set({from: at(r[0] - span / 2), to: at(r[1] + span / 2)});
});
$('#reload').addEventListener('click', () => render(ALL));
$('#timebox').addEventListener('submit', (e) => {
	e.preventDefault();
	const t = $('#timebox-t').value.trim() || $('#timebox-t').placeholder;
	if (t)
		ask(t);
});
document.addEventListener('keydown', (e) => {
	if (e.key === 'Escape' && picking) {
		picking = null;
		hint(null);
		chart.setBands({pick: null});
	}
});

onChange(render);
loadHosts();
render(ALL);
