// SPDX-License-Identifier: MIT
// The comparison of two ranges: A and B as editable FROM..TO fields (or two
// drags on the chart), the differential flame graph of B against A and the
// sentences of the diff filter's findings (api/v1/diff).

import {h, report, weight, range, showPair, readPair} from './util.js';
import {set} from './state.js';
import {graph} from './flame.js';
import {findingList} from './epoch.js';
import * as api from './api.js';

let gen = 0;
const TIMES = 'FROM..TO; each a local time as shown (2026-11-25 17:05:30) or any form ' +
    'the server reads: -2h, now, 2026-11-25T17:05, ...Z, @UNIXSECONDS';

// hooks: pick() starts picking A and B on the chart; bands({a, b}) marks them.
export async function render(st, el, vitals, hooks) {
	const my = ++gen;
	const names = vitals ? vitals.map((v) => v.name) : [st.cv];
	const field = (id, v) => h('input', {id, type: 'text', size: 40, value: showPair(v),
	    placeholder: 'FROM..TO, e.g. -2h..-1h', spellcheck: 'false', title: TIMES});
	const go = () => set({a: readPair(el.querySelector('#range-a').value),
	    b: readPair(el.querySelector('#range-b').value),
	    cv: el.querySelector('#compare-vital').value});
	el.replaceChildren(
	    h('form', {class: 'toolbar', onsubmit: (e) => (e.preventDefault(), go())},
		h('label', {class: 'tag-a'}, 'A ', field('range-a', st.a)),
		h('label', {class: 'tag-b'}, 'B ', field('range-b', st.b)),
		h('label', {}, 'vital ', h('select', {id: 'compare-vital'},
		    names.map((n) => h('option', {value: n, selected: n === st.cv}, n)))),
		h('button', {type: 'submit', id: 'compare-go'}, 'compare'),
		h('button', {type: 'button', id: 'pick-ab', onclick: hooks.pick}, 'pick A and B on the chart')),
	    h('div', {class: 'compare-sum dim'}),
	    h('section', {}, h('h3', {}, 'What changed (diff findings)'),
		h('div', {id: 'diff-findings'}, h('p', {class: 'dim'}, '…'))),
	    h('h3', {}, 'Differential flame graph of B ',
		h('span', {class: 'dim'}, '(red: more than in A, blue: less; widths are B’s)')),
	    h('div', {class: 'flame-details dim'}, ' '),
	    h('div', {id: 'diff-flame', class: 'flame-box'}));
	if (!st.a || !st.b) {
		report('diff', null);
		hooks.bands({a: null, b: null});
		el.querySelector('#diff-findings').replaceChildren(h('p', {class: 'hint'},
		    'Set ranges A and B: type them as FROM..TO (any time form: -2h, 2026-11-25T17:05, ' +
		    '@SECONDS), pick them with two drags on the chart, or ask the time box above.'));
		return;
	}
	const box = el.querySelector('#diff-flame');
	box.classList.add('loading');
	try {
		const r = await api.get('diff', {a: st.a, b: st.b, vital: st.cv, host: st.host});
		if (my !== gen)
			return;
		report('diff', null);
		hooks.bands({a: [r.a.from_ns, r.a.to_ns], b: [r.b.from_ns, r.b.to_ns]});
		el.querySelector('.compare-sum').textContent =
		    `A ${range(r.a.from_ns, r.a.to_ns)}  ·  B ${range(r.b.from_ns, r.b.to_ns)}  ·  ` +
		    `${r.vital} in B: ${weight(r.tree.value, r.unit)}, ` +
		    `${r.tree.delta >= 0 ? '+' : '−'}${weight(Math.abs(r.tree.delta || 0), r.unit)} against A`;
		el.querySelector('#diff-findings').replaceChildren(findingList(r.findings));
		graph(box, r.tree, r.unit, true);
	} catch (e) {
		if (my !== gen)
			return;
		report('diff', e);
		el.querySelector('#diff-findings').replaceChildren(h('p', {class: 'hint'},
		    'No comparison (see above).'));
	} finally {
		box.classList.remove('loading');
	}
}
