// SPDX-License-Identifier: MIT
// The flame graph view: the merged stacks of one vital over the chart's range
// (api/v1/flame), drawn by d3-flame-graph, filterable by exe.  graph() also
// draws the comparison's differential tree.

import {h, report, weight, pct} from './util.js';
import {set} from './state.js';
import * as api from './api.js';

let gen = 0;
const graphs = new WeakMap();   // container -> its d3-flame-graph chart
let exes = [];                  // the exes of the last unfiltered graph

// Draw tree into container; differential trees colour nodes by their delta.
export function graph(container, tree, unit, differential) {
	const old = graphs.get(container);
	if (old)
		old.destroy();
	container.replaceChildren();
	if (!tree || !tree.value) {
		container.append(h('p', {class: 'hint'}, 'No samples in this range.'));
		return null;
	}
	const total = tree.value;
	const label = (d) => {
		let s = `${d.data.name} — ${weight(d.value, unit)} (${pct(d.value / total)})`;
		if (differential && d.data.delta != null)
			s += `, ${d.data.delta >= 0 ? '+' : '−'}${weight(Math.abs(d.data.delta), unit)} against A`;
		return s;
	};
	const fg = flamegraph.default()
	    .width(Math.max(300, container.clientWidth))
	    .cellHeight(18)
	    .minFrameSize(1)
	    .transitionDuration(0)
	    .sort(true)
	    .setLabelHandler(label)
	    .tooltip(flamegraph.tooltip.defaultFlamegraphTooltip().text(label));
	if (differential)
		fg.setColorMapper(flamegraph.colorMapper.differentialColorMapper);
	const details = container.parentElement.querySelector('.flame-details');
	if (details)
		fg.setDetailsElement(details);
	d3.select(container).datum(tree).call(fg);
	graphs.set(container, fg);
	return fg;
}

export async function render(st, el, vitals) {
	const my = ++gen;
	const names = vitals ? vitals.map((v) => v.name) : [st.fv];
	let fg = null;
	const search = h('input', {type: 'search', placeholder: 'highlight frames…', size: 18,
	    oninput: (e) => fg && (e.target.value ? fg.search(e.target.value) : fg.clear())});
	const exeBox = h('input', {id: 'flame-exe', type: 'text', list: 'flame-exes', size: 28,
	    placeholder: 'every exe', value: st.exe,
	    onchange: (e) => set({exe: e.target.value.trim()}),
	    onkeydown: (e) => e.key === 'Enter' && set({exe: e.target.value.trim()})});
	el.replaceChildren(
	    h('div', {class: 'toolbar'},
		h('label', {}, 'vital ', h('select', {id: 'flame-vital', onchange: (e) => set({fv: e.target.value})},
		    names.map((n) => h('option', {value: n, selected: n === st.fv}, n)))),
		h('label', {}, 'exe ', exeBox, h('datalist', {id: 'flame-exes'},
		    exes.map((x) => h('option', {value: x})))),
		st.exe ? h('button', {onclick: () => set({exe: ''})}, 'all exes') : '',
		search,
		h('button', {onclick: () => fg && fg.resetZoom()}, 'reset zoom'),
		h('span', {class: 'flame-sum dim'})),
	    h('div', {class: 'flame-details dim'}, ' '),
	    h('div', {id: 'flame-graph', class: 'flame-box loading'}));
	const box = el.querySelector('#flame-graph');
	try {
		const r = await api.get('flame', {vital: st.fv, from: st.from, to: st.to,
		    host: st.host, exe: st.exe});
		if (my !== gen)
			return;
		report('flame', null);
		if (!st.exe && r.tree.children) {
			exes = r.tree.children.map((c) => c.name);
			el.querySelector('#flame-exes').replaceChildren(
			    ...exes.map((x) => h('option', {value: x})));
		}
		el.querySelector('.flame-sum').textContent =
		    `${r.vital}: ${weight(r.tree.value, r.unit)} in stacks` +
		    (st.exe ? ` of ${st.exe}` : '') + '; click a frame to zoom';
		fg = graph(box, r.tree, r.unit, false);
	} catch (e) {
		if (my !== gen)
			return;
		report('flame', e);
		box.replaceChildren(h('p', {class: 'hint'}, 'No flame graph (see above).'));
	} finally {
		box.classList.remove('loading');
	}
}
