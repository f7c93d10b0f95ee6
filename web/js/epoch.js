// SPDX-License-Identifier: MIT
// The epoch detail: for the slot clicked on the chart, the top exes and sites
// per vital (api/v1/top over the slot), its findings, and the samples of one of
// its epochs with their kernel and user stacks (api/v1/samples).

import {h, report, color, weight, time, range, pct, pair, atNs} from './util.js';
import {set} from './state.js';
import * as api from './api.js';

let gen = 0;

export async function render(st, el) {
	const my = ++gen;
	const r = pair(st.sel);
	if (!r) {
		report('epoch', null);
		el.replaceChildren(h('p', {class: 'hint'}, 'Click a point on the chart to see that epoch: ' +
		    'its top exes, its findings and its samples with their stacks.'));
		return;
	}
	const [fromNs, toNs] = r.map(atNs);
	const q = {from: r[0], to: r[1], host: st.host};
	el.classList.add('loading');
	try {
		const [eps, top, found] = await Promise.all([api.get('epochs', q),
		    api.get('top', {...q, k: 5}), api.get('findings', q)]);
		if (my !== gen)
			return;
		const epochs = eps.epochs.filter((e) => e.start_ns >= fromNs && e.start_ns < toNs);
		// the samples of: the vital asked, else cpu if shown, else the first shown
		const names = top.vitals.map((v) => v.name);
		const shown = names.filter((n) => !st.vitals || st.vitals.split(',').includes(n));
		const ev = names.includes(st.ev) ? st.ev :
		    shown.includes('cpu') ? 'cpu' : shown[0] || names[0];
		const ep = epochs.find((e) => e.id === st.eid && (!st.ehost || e.host === st.ehost)) ||
		    heaviest(epochs, ev);
		const samples = ep ? await api.get('samples', {epoch: ep.id, host: ep.host, vital: ev,
		    limit: 200}) : {samples: []};
		if (my !== gen)
			return;
		report('epoch', null);
		el.replaceChildren(
		    h('div', {class: 'panel-head'},
			h('h2', {}, `Slot ${range(fromNs, toNs)}`),
			epochPicker(epochs, ep)),
		    h('div', {class: 'cols'},
			h('section', {class: 'top'}, h('h3', {}, 'Top exes and sites per vital'),
			    topTable(top.vitals)),
			h('section', {id: 'epoch-findings'}, h('h3', {}, `Findings (${found.findings.length})`),
			    findingList(found.findings))),
		    h('section', {class: 'samples'},
			h('h3', {}, 'Samples ', ep ? h('span', {class: 'dim'},
			    `of the epoch ${time(ep.start_ns)} on ${ep.host}, largest counts first`) : ''),
			h('div', {class: 'tabs small'}, names.map((n) => h('button', {
			    class: n === ev ? 'on' : '', dataset: {vital: n},
			    onclick: () => set({ev: n}, true)}, n))),
			sampleList(samples.samples, top.vitals.find((v) => v.name === ev))));
	} catch (e) {
		if (my !== gen)
			return;
		report('epoch', e);
		el.replaceChildren(h('p', {class: 'hint'}, 'This epoch could not be loaded (see above).'));
	} finally {
		if (my === gen)
			el.classList.remove('loading');
	}
}

function heaviest(epochs, vital) {
	const w = (e) => (e.vitals[vital] || {wsum: 0}).wsum;
	return epochs.reduce((a, e) => !a || w(e) > w(a) ? e : a, null);
}

function epochPicker(epochs, ep) {
	if (epochs.length < 2)
		return ep ? h('span', {class: 'dim'}, `host ${ep.host}`) : '';
	return h('label', {}, 'epoch ', h('select', {id: 'epoch-pick', onchange: (e) => {
		const [id, host] = e.target.value.split('|');
		set({eid: id, ehost: host}, true);
	}}, epochs.map((e) => h('option', {value: `${e.id}|${e.host}`, selected: e === ep},
	    `${time(e.start_ns)} ${e.host}${e.findings ? ` (${e.findings} findings)` : ''}`))));
}

function base(path) {
	return path.slice(path.lastIndexOf('/') + 1) || path;
}

function topTable(vitals) {
	return h('table', {class: 'toptable'}, vitals.map((v) => h('tr', {dataset: {vital: v.name}},
	    h('th', {}, h('span', {class: 'swatch', style: `background:${color(v.name)}`}), v.name),
	    h('td', {class: 'num'}, weight(v.wsum, v.unit)),
	    h('td', {},
		h('div', {}, v.exes.map((x) => h('span', {class: 'share', title: `${x.exe} (${x.comm}): ` +
		    `${weight(x.weight, v.unit)}`, style: `--share:${x.share * 100}%`},
		    `${base(x.exe)} ${pct(x.share)}`))),
		v.sites && v.sites.length ? h('div', {class: 'sites dim'}, 'sites: ',
		    v.sites.map((s) => `${s.site} ${pct(s.share)}`).join(' · ')) : ''))));
}

export function findingList(findings) {
	if (!findings.length)
		return h('p', {class: 'dim'}, 'None.');
	return h('ul', {class: 'findings'}, findings.map((f) => h('li', {dataset: {severity: f.severity}},
	    h('span', {class: `sev sev-${f.severity}`}, f.severity), ' ',
	    f.start_ns ? h('span', {class: 'dim'}, `${time(f.start_ns)} ${f.host || ''} `) : '',
	    f.text)));
}

function sampleList(samples, v) {
	if (!samples.length)
		return h('p', {class: 'dim'}, 'No samples of this vital in this epoch.');
	samples = [...samples].sort((a, b) => b.count - a.count || a.ts_ns - b.ts_ns);
	return h('div', {class: 'sample-grid'}, samples.map((s) => h('div', {class: 'sample'},
	    h('div', {class: 'sample-head'},
		h('b', {}, weight(s.weight, v && v.unit)), h('span', {class: 'dim', title: 'the HCA counter ' +
		    'of its label after this event'}, ` count ${s.count}`), ' · ',
		h('span', {class: 'exe', title: s.exe}, base(s.exe)),
		` (${s.comm}) pid ${s.pid}${s.tid !== s.pid ? `/${s.tid}` : ''} uid ${s.uid}`,
		h('span', {class: 'dim'}, ` ${time(s.ts_ns).slice(11)}`)),
	    h('ol', {class: 'stack'},
		(s.kstack || []).map((f) => h('li', {class: 'frame kernel'}, f)),
		(s.ustack || []).map((f) => h('li', {class: 'frame user'}, f))))));
}
