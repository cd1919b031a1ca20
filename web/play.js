// play.js - play a level in the dashboard, against the service's own check
// operations: the level view (app.js) dispatches `starforge:level` with the
// level document and the empty <section id="play">, and this file fills it
// with the kind's game; `starforge:leave` clears it.
//
//   digger     tap the arrows (pointer or keyboard: every arrow is a button,
//              carrying data-side and data-index as the level's JSON names
//              it); after each tap POST /v1/digger/check replays the moves
//              and answers the position (its `state`), the gold and, once
//              the level is solved, the stars; undo, restart, and a hint
//              from POST /v1/digger/hint. A play ends solved, or when no
//              arrow can be tapped (no stars).
//   lattice    fold the chain one residue at a time (move buttons, the
//              arrow keys, or a click on a free neighbouring site), undo,
//              restart; the HH contacts are counted as the chain grows and
//              the finished fold is rated by POST /v1/lattice/check.
//   racetrack  the simulated player's lap (solution.player_lap) drawn as a
//              car moving along the track, each segment coloured by the PX
//              the player felt there; its lap time rated by
//              POST /v1/racetrack/check.
//
// The stars a play earned are written into the element with role="status"
// (#play-stars). Nothing the service sends is written as HTML.
'use strict';

(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const ARROW = { up: '\u2191', right: '\u2192', down: '\u2193', left: '\u2190' };
  const SIDE_WORD = { left: 'row', right: 'row', top: 'column', bottom: 'column' };
  // The digger picture's machine colours (core/digger/svg.c), machine 0 first;
  // machines are numbered from 1 on the board, as in the picture.
  const MACHINE_COLOURS = ['#ff5d73', '#3a86ff', '#2ec4b6', '#9b5de5', '#ff9f1c', '#8ac926'];
  let leave = null; // the running game's clean-up

  const sf = () => window.starforge;
  const el = (...args) => sf().el(...args);

  function svgEl(tag, attrs = {}, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  function starsText(stars) {
    if (stars == null) return 'no stars (this level has no thresholds)';
    return `${'\u2605'.repeat(stars)}${'\u2606'.repeat(3 - stars)} ${stars} star${stars === 1 ? '' : 's'}`;
  }

  function problemText(res) {
    const b = res.body || {};
    return b.detail || b.title || `HTTP ${res.status}`;
  }

  /** The frame every game shares: title, board, controls, status lines. */
  function frame(root, title, help) {
    root.replaceChildren();
    const heading = el('h3', { id: 'play-title', textContent: title });
    const note = el('p', { className: 'muted play-help', textContent: help });
    const board = el('div', { className: 'play-board' });
    const controls = el('div', { className: 'play-controls' });
    const progress = el('p', { id: 'play-progress', className: 'play-progress', 'aria-live': 'polite' });
    const message = el('p', { id: 'play-message', className: 'play-message', 'aria-live': 'polite' });
    const stars = el('p', { id: 'play-stars', className: 'play-stars', role: 'status' });
    root.append(heading, note, board, controls, progress, stars, message);
    root.hidden = false;
    return { board, controls, progress, message, stars };
  }

  function button(label, onClick, props = {}) {
    const b = el('button', { type: 'button', textContent: label, ...props });
    b.addEventListener('click', onClick);
    return b;
  }

  // ---- digger ----

  function playDigger(level, root) {
    const puzzle = level.puzzle;
    const ui = frame(
      root,
      'Play',
      'Tap an arrow to move every machine in its row or column; collect all the gold within the turns. ' +
        'Keys: the arrow buttons take Enter or Space; U undo, R restart, H hint.',
    );
    let moves = [];
    const answers = []; // answers[k]: the check's answer after the first k moves
    let busy = false;
    let hinted = null;
    let alive = true;

    const undoButton = button('Undo', () => undo(), { id: 'play-undo', 'aria-keyshortcuts': 'U' });
    const restartButton = button('Restart', () => restart(), { id: 'play-restart', 'aria-keyshortcuts': 'R' });
    const hintButton = button('Hint', () => hint(), { id: 'play-hint', 'aria-keyshortcuts': 'H' });
    ui.controls.append(undoButton, restartButton, hintButton);

    // The board: a (w + 2) x (h + 2) grid, arrows around the cells.
    const grid = el('div', { className: 'dg-grid', role: 'group', 'aria-label': 'Digger board', tabIndex: -1 });
    grid.style.setProperty('--cols', String(puzzle.width + 2));
    ui.board.append(grid);
    const arrowButtons = new Map(); // "side:index" -> button
    const cells = [];
    const terrainAt = new Map(puzzle.cells.map((c) => [`${c.x},${c.y}`, c]));
    for (let y = -1; y <= puzzle.height; y++) {
      for (let x = -1; x <= puzzle.width; x++) {
        const inRow = y >= 0 && y < puzzle.height;
        const inCol = x >= 0 && x < puzzle.width;
        let side = null;
        let index = 0;
        if (inRow && x === -1) [side, index] = ['left', y];
        else if (inRow && x === puzzle.width) [side, index] = ['right', y];
        else if (inCol && y === -1) [side, index] = ['top', x];
        else if (inCol && y === puzzle.height) [side, index] = ['bottom', x];
        if (side) {
          const arrow = puzzle.arrows.find((a) => a.side === side && a.index === index);
          const b = button('', () => tap(side, index), {
            className: 'dg-arrow',
            dataset: { side, index: String(index), dir: arrow.dir },
          });
          arrowButtons.set(`${side}:${index}`, b);
          grid.append(b);
        } else if (inRow && inCol) {
          const cell = el('div', { className: 'dg-cell', role: 'img' });
          const t = terrainAt.get(`${x},${y}`);
          if (t) cell.classList.add(`dg-${t.terrain}`);
          cells.push(cell);
          grid.append(cell);
        } else {
          grid.append(el('div', { className: 'dg-corner', 'aria-hidden': 'true' }));
        }
      }
    }

    function describeArrow(side, index, arrow, uses) {
      const line = `${SIDE_WORD[side]} ${index + 1}`;
      return `${side} arrow of ${line}, points ${arrow.dir}, ${uses} use${uses === 1 ? '' : 's'} left`;
    }

    function draw(answer) {
      root.toggleAttribute('data-busy', busy);
      const st = answer.state;
      const byCell = new Map();
      st.machines.forEach((m, i) => byCell.set(`${m.x},${m.y}`, { i, frozen: m.frozen }));
      // Under gold_in_order a gold shows its number: only the next one counts.
      const gold = new Map(st.gold.map((g) => [`${g.x},${g.y}`, g.order]));
      const ordered = Boolean(puzzle.rules && puzzle.rules.gold_in_order);
      const cellState = new Map(st.cells.map((c) => [`${c.x},${c.y}`, c]));
      for (let y = 0; y < puzzle.height; y++) {
        for (let x = 0; x < puzzle.width; x++) {
          const cell = cells[y * puzzle.width + x];
          const key = `${x},${y}`;
          const t = terrainAt.get(key);
          const cs = cellState.get(key);
          const m = byCell.get(key);
          const parts = [];
          const words = [`cell ${x + 1},${y + 1}`];
          if (t && t.terrain !== 'mud') words.push(t.terrain);
          if (t && t.machines && t.machines.length && t.terrain === 'stone')
            words.push(`machine${t.machines.length === 1 ? '' : 's'} ${t.machines.map((i) => i + 1).join(', ')} may pass`);
          if (cs && cs.spent) words.push('spent');
          if (cs && cs.visits_left > 0) words.push(`${cs.visits_left} visit${cs.visits_left === 1 ? '' : 's'} to go`);
          if (m) {
            const chip = el('span', { className: `dg-machine${m.frozen ? ' dg-frozen' : ''}`, textContent: String(m.i + 1) });
            chip.style.background = MACHINE_COLOURS[m.i % MACHINE_COLOURS.length];
            parts.push(chip);
            words.push(`machine ${m.i + 1}${m.frozen ? ' (frozen)' : ''}`);
          }
          for (const i of (t && t.terrain === 'stone' && t.machines) || []) {
            const dot = el('span', { className: 'dg-pass', 'aria-hidden': 'true' });
            dot.style.background = MACHINE_COLOURS[i % MACHINE_COLOURS.length];
            parts.push(dot);
          }
          if (gold.has(key)) {
            parts.push(el('span', { className: ordered ? 'dg-gold dg-ordered' : 'dg-gold', textContent: ordered ? String(gold.get(key)) : '\u25cf' }));
            words.push(ordered ? `gold number ${gold.get(key)}` : 'gold');
          }
          if (cs && cs.visits_left > 0) parts.push(el('span', { className: 'dg-visits', textContent: String(cs.visits_left) }));
          cell.replaceChildren(...parts);
          cell.classList.toggle('dg-spent', Boolean(cs && cs.spent));
          cell.title = words.join(', ');
          cell.setAttribute('aria-label', cell.title);
        }
      }
      for (const a of st.arrows) {
        const b = arrowButtons.get(`${a.side}:${a.index}`);
        const arrow = puzzle.arrows.find((p) => p.side === a.side && p.index === a.index);
        b.textContent = a.uses > 0 ? `${ARROW[arrow.dir]}${a.uses}` : ARROW[arrow.dir];
        b.disabled = busy || !a.tappable;
        b.classList.toggle('dg-hidden', a.uses === 0);
        b.classList.toggle('dg-hinted', hinted === `${a.side}:${a.index}`);
        b.setAttribute('aria-label', describeArrow(a.side, a.index, arrow, a.uses));
      }
      const over = answer.solved || !st.arrows.some((a) => a.tappable);
      ui.progress.textContent =
        `Gold ${answer.gold} of ${answer.gold_total} \u00b7 taps ${answer.turns} \u00b7 turns left ${answer.turns_left}` +
        (answer.thresholds ? ` \u00b7 stars at ${answer.thresholds.join(' / ')} taps` : '');
      if (answer.solved) ui.stars.textContent = `Solved in ${answer.turns} taps: ${starsText(answer.stars)}`;
      else if (over) ui.stars.textContent = `No tap can be played: ${starsText(answer.thresholds ? 0 : null)}`;
      else ui.stars.textContent = '';
      undoButton.disabled = busy || moves.length === 0;
      restartButton.disabled = busy || moves.length === 0;
      hintButton.disabled = busy || answer.solved;
    }

    /** The check's answer for `next`, drawn disabled while it is asked. */
    async function check(next) {
      busy = true;
      if (answers.length) draw(answers[moves.length]);
      const res = await sf().api('POST', '/v1/digger/check', { json: { level: puzzle, moves: next } });
      busy = false;
      if (!alive) return null;
      if (!res.ok) {
        ui.message.textContent = problemText(res);
        if (answers.length) draw(answers[moves.length]);
        return null;
      }
      return res.body;
    }

    async function tap(side, index) {
      if (busy) return;
      hinted = null;
      ui.message.textContent = '';
      const next = [...moves, { side, index }];
      const answer = await check(next);
      if (!answer) return;
      moves = next;
      answers[moves.length] = answer;
      answers.length = moves.length + 1;
      draw(answer);
      // The tapped arrow keeps the focus, so the keys go on working; when
      // that was its last use it is disabled and hidden, and the focus
      // would fall to the page, out of reach of U, R and H: the board
      // takes it instead.
      const b = arrowButtons.get(`${side}:${index}`);
      if (b && !b.disabled) b.focus();
      else grid.focus();
    }

    function undo() {
      if (busy || moves.length === 0) return;
      hinted = null;
      moves = moves.slice(0, -1);
      ui.message.textContent = `Undone: ${moves.length} taps.`;
      draw(answers[moves.length]);
    }

    function restart() {
      if (busy) return;
      hinted = null;
      moves = [];
      ui.message.textContent = 'Restarted.';
      draw(answers[0]);
    }

    async function hint() {
      if (busy) return;
      busy = true;
      draw(answers[moves.length]);
      const res = await sf().api('POST', '/v1/digger/hint', { json: { level: puzzle, moves } });
      busy = false;
      if (!alive) return;
      if (!res.ok) {
        ui.message.textContent = problemText(res);
      } else {
        const h = res.body;
        if (h.winnable === false) {
          ui.message.textContent = `This position cannot win any more: undo ${h.undo} tap${h.undo === 1 ? '' : 's'}.`;
        } else if (h.hint) {
          hinted = `${h.hint.side}:${h.hint.index}`;
          ui.message.textContent =
            `Hint: tap the ${h.hint.side} arrow of ${SIDE_WORD[h.hint.side]} ${h.hint.index + 1} ` +
            `(${h.taps_needed} tap${h.taps_needed === 1 ? '' : 's'} to win from here).`;
        } else {
          ui.message.textContent = h.reason || 'No hint for this position.';
        }
      }
      draw(answers[moves.length]);
    }

    function onKey(event) {
      if (event.target.closest('input, textarea, select')) return;
      const key = event.key.toLowerCase();
      if (key === 'u' || (key === 'z' && (event.ctrlKey || event.metaKey))) undo();
      else if (key === 'r' && !event.ctrlKey && !event.metaKey) restart();
      else if (key === 'h') hint();
      else return;
      event.preventDefault();
    }
    root.addEventListener('keydown', onKey);

    (async () => {
      const answer = await check([]);
      if (!answer) return;
      answers[0] = answer;
      draw(answer);
    })();

    return () => {
      alive = false;
      root.removeEventListener('keydown', onKey);
    };
  }

  // ---- lattice ----

  const STEP = { R: [1, 0, 0], L: [-1, 0, 0], U: [0, 1, 0], D: [0, -1, 0], F: [0, 0, 1], B: [0, 0, -1] };
  const KEY_MOVE = { ArrowRight: 'R', ArrowLeft: 'L', ArrowUp: 'U', ArrowDown: 'D', PageUp: 'F', PageDown: 'B' };
  const MOVE_WORD = { R: 'right', L: 'left', U: 'up', D: 'down', F: 'forward (+z)', B: 'back (-z)' };

  function playLattice(level, root) {
    const seq = level.puzzle.sequence;
    const cubic = level.puzzle.lattice === 'cubic';
    const letters = cubic ? 'RLUDFB' : 'RLUD';
    const thresholds = level.stars && level.stars.thresholds;
    const ui = frame(
      root,
      'Play',
      `Fold the chain: place residue after residue on a free neighbouring site; every pair of H residues ` +
        `next to each other (not along the chain) is a contact, and more contacts earn more stars. ` +
        `Keys: the arrow keys${cubic ? ', Page Up / Page Down for \u00b1z' : ''}; U or Backspace undo.`,
    );
    let fold = '';
    let alive = true;
    let checking = false;

    const moveButtons = {};
    for (const m of letters) {
      moveButtons[m] = button(m, () => place(m), {
        className: 'lat-move',
        dataset: { move: m },
        'aria-label': `Place the next residue ${MOVE_WORD[m]}`,
      });
    }
    const undoButton = button('Undo', () => undo(), { id: 'play-undo', 'aria-keyshortcuts': 'U' });
    const restartButton = button('Restart', () => restart(), { id: 'play-restart' });
    ui.controls.append(...letters.split('').map((m) => moveButtons[m]), undoButton, restartButton);

    const svg = svgEl('svg', { class: 'lat-svg', role: 'img', 'aria-label': 'The chain as folded so far' });
    ui.board.append(svg);

    function sites(f) {
      const at = [[0, 0, 0]];
      for (const m of f) {
        const p = at[at.length - 1];
        const s = STEP[m];
        at.push([p[0] + s[0], p[1] + s[1], p[2] + s[2]]);
      }
      return at;
    }

    const key = (p) => p.join(',');

    function contacts(at) {
      const index = new Map(at.map((p, i) => [key(p), i]));
      const pairs = [];
      at.forEach((p, i) => {
        if (seq[i] !== 'H') return;
        for (const s of Object.values(STEP)) {
          const j = index.get(key([p[0] + s[0], p[1] + s[1], p[2] + s[2]]));
          if (j !== undefined && j > i + 1 && seq[j] === 'H') pairs.push([i, j]);
        }
      });
      return pairs;
    }

    function draw() {
      const at = sites(fold);
      const occupied = new Set(at.map(key));
      const head = at[at.length - 1];
      const done = at.length === seq.length;
      // Sites the next residue may take.
      const free = done
        ? []
        : letters
            .split('')
            .map((m) => [m, [head[0] + STEP[m][0], head[1] + STEP[m][1], head[2] + STEP[m][2]]])
            .filter(([, p]) => !occupied.has(key(p)));
      const zOff = (p) => (cubic ? p[2] * 0.3 : 0);
      const pts = [...at, ...free.map(([, p]) => p)];
      const xs = pts.map((p) => p[0] + zOff(p));
      const ys = pts.map((p) => p[1] + zOff(p));
      const minX = Math.min(...xs) - 1;
      const maxX = Math.max(...xs) + 1;
      const minY = Math.min(...ys) - 1;
      const maxY = Math.max(...ys) + 1;
      const S = 40;
      const X = (p) => (p[0] + zOff(p) - minX) * S;
      const Y = (p) => (maxY - p[1] - zOff(p)) * S;
      svg.setAttribute('viewBox', `0 0 ${(maxX - minX) * S} ${(maxY - minY) * S}`);
      const items = [];
      for (const [i, j] of contacts(at)) {
        items.push(svgEl('line', { x1: X(at[i]), y1: Y(at[i]), x2: X(at[j]), y2: Y(at[j]), class: 'lat-contact' }));
      }
      for (let i = 1; i < at.length; i++) {
        items.push(svgEl('line', { x1: X(at[i - 1]), y1: Y(at[i - 1]), x2: X(at[i]), y2: Y(at[i]), class: 'lat-bond' }));
      }
      for (const [m, p] of free) {
        const target = svgEl('circle', { cx: X(p), cy: Y(p), r: 11, class: 'lat-free', 'data-move': m });
        target.append(svgEl('title', {}, `place residue ${at.length} ${MOVE_WORD[m]}`));
        target.addEventListener('click', () => place(m));
        items.push(target);
      }
      at.forEach((p, i) => {
        const h = seq[i] === 'H';
        items.push(svgEl('circle', { cx: X(p), cy: Y(p), r: 12, class: h ? 'lat-h' : 'lat-p' }));
        items.push(
          svgEl('text', { x: X(p), y: Y(p) + 4, class: h ? 'lat-label lat-label-h' : 'lat-label' }, String(i)),
        );
      });
      svg.replaceChildren(...items);
      for (const m of letters) moveButtons[m].disabled = checking || done || !free.some(([f]) => f === m);
      undoButton.disabled = checking || fold.length === 0;
      restartButton.disabled = checking || fold.length === 0;
      const score = contacts(at).length;
      let next = '';
      if (thresholds) {
        const earned = thresholds.filter((t) => score >= t).length;
        next = earned < 3 ? ` \u00b7 next star at ${thresholds[earned]}` : '';
      }
      ui.progress.textContent =
        `Residue ${at.length} of ${seq.length} placed \u00b7 ${score} contact${score === 1 ? '' : 's'}${next}` +
        (thresholds ? ` \u00b7 stars at ${thresholds.join(' / ')} contacts` : '');
      if (!done) {
        ui.stars.textContent = '';
        if (free.length === 0) ui.message.textContent = 'The chain is trapped: no free site next to its end. Undo.';
      }
      return { done, score };
    }

    async function finish() {
      checking = true;
      draw();
      const res = await sf().api('POST', '/v1/lattice/check', { json: { level, fold } });
      checking = false;
      if (!alive) return;
      if (!res.ok) ui.message.textContent = problemText(res);
      else if (!res.body.valid) ui.message.textContent = res.body.reason;
      else
        ui.stars.textContent = `Folded with ${res.body.score} contact${res.body.score === 1 ? '' : 's'}: ${starsText(res.body.stars)}`;
      draw();
    }

    function place(m) {
      if (checking || fold.length >= seq.length - 1) return;
      const at = sites(fold);
      const head = at[at.length - 1];
      const p = [head[0] + STEP[m][0], head[1] + STEP[m][1], head[2] + STEP[m][2]];
      if (at.some((q) => key(q) === key(p))) {
        ui.message.textContent = `Residue ${at.length} cannot go ${MOVE_WORD[m]}: that site is taken.`;
        return;
      }
      fold += m;
      ui.message.textContent = '';
      if (draw().done) finish();
    }

    function undo() {
      if (checking || !fold) return;
      fold = fold.slice(0, -1);
      ui.message.textContent = '';
      draw();
    }

    function restart() {
      if (checking) return;
      fold = '';
      ui.message.textContent = '';
      draw();
    }

    function onKey(event) {
      if (event.target.closest('input, textarea, select')) return;
      const m = KEY_MOVE[event.key];
      if (m && letters.includes(m)) place(m);
      else if (event.key === 'Backspace' || event.key.toLowerCase() === 'u') undo();
      else return;
      event.preventDefault();
    }
    root.addEventListener('keydown', onKey);
    root.tabIndex = -1;
    draw();
    return () => {
      alive = false;
      root.removeEventListener('keydown', onKey);
    };
  }

  // ---- racetrack ----

  /** PX 0..1 as a colour on the pictures' ramp (svg_ramp in core/svg.c:
   * RdYlBu, blue calm to red intense). */
  const RAMP = [
    [0x2c, 0x7b, 0xb6],
    [0xab, 0xd9, 0xe9],
    [0xff, 0xff, 0xbf],
    [0xfd, 0xae, 0x61],
    [0xd7, 0x19, 0x1c],
  ];
  function pxColour(px) {
    const t = Math.max(0, Math.min(1, Number(px) || 0)) * 4;
    const i = Math.min(3, Math.floor(t));
    const f = t - i;
    const c = RAMP[i].map((v, k) => Math.round(v + (RAMP[i + 1][k] - v) * f));
    return `rgb(${c.join(', ')})`;
  }

  function playRacetrack(level, root) {
    const puzzle = level.puzzle;
    const lap = level.solution && level.solution.player_lap;
    const ui = frame(
      root,
      'Play',
      "The simulated player's lap: the car drives the track, each segment coloured by the excitement (PX) " +
        'the player felt there, as in the picture (blue calm, yellow, red intense); the lap time earns the stars.',
    );
    let alive = true;
    let frameId = 0;
    const spline = puzzle.spline || [];
    const segments = puzzle.segments || [];
    const segPx = (lap && lap.segment_px) || segments.map((s) => s.simulated_px);
    const xs = spline.map((p) => p[0]);
    const ys = spline.map((p) => p[1]);
    const pad = puzzle.width || 10;
    const minX = Math.min(...xs) - pad;
    const minY = Math.min(...ys) - pad;
    const w = Math.max(...xs) + pad - minX;
    const h = Math.max(...ys) + pad - minY;
    const svg = svgEl('svg', {
      class: 'trk-svg',
      viewBox: `${minX.toFixed(1)} ${minY.toFixed(1)} ${w.toFixed(1)} ${h.toFixed(1)}`,
      role: 'img',
      'aria-label': 'The track with the player lap',
    });
    const bounds = segments.map((s) => s.start_sample).concat([spline.length - 1]);
    segments.forEach((s, i) => {
      const pts = spline.slice(bounds[i], bounds[i + 1] + 1).map((p) => `${p[0].toFixed(1)},${p[1].toFixed(1)}`);
      const line = svgEl('polyline', {
        points: pts.join(' '),
        class: 'trk-seg',
        stroke: pxColour(segPx[i]),
        'stroke-width': puzzle.width || 8,
        'data-segment': i,
      });
      line.append(svgEl('title', {}, `segment ${i + 1}: PX ${Number(segPx[i]).toFixed(2)}`));
      svg.append(line);
    });
    const car = svgEl('circle', { r: (puzzle.width || 8) * 0.6, class: 'trk-car' });
    if (spline.length) {
      car.setAttribute('cx', spline[0][0]);
      car.setAttribute('cy', spline[0][1]);
    }
    svg.append(car);
    ui.board.append(svg);
    const legend = el('p', { className: 'trk-legend muted' });
    segments.forEach((s, i) => {
      legend.append(
        el('span', { className: 'trk-chip', textContent: `${i + 1}: ${Number(segPx[i]).toFixed(2)}`, title: `segment ${i + 1} PX` }),
      );
      legend.lastChild.style.borderColor = pxColour(segPx[i]);
    });
    ui.board.append(legend);

    const playButton = button('Watch the lap', () => animate(), { id: 'play-lap' });
    ui.controls.append(playButton);

    // The lap replays in a tenth of its time (at least 3 s), at the mean speed.
    function animate() {
      cancelAnimationFrame(frameId);
      const seconds = Math.max(3, ((lap && lap.time) || 30) / 10);
      const t0 = performance.now();
      const stepFrame = (now) => {
        if (!alive || spline.length === 0) return;
        // A frame's time may come before t0 (it is the frame's start).
        const f = Math.max(0, Math.min(1, (now - t0) / (seconds * 1000)));
        const i = Math.min(spline.length - 1, Math.floor(f * (spline.length - 1)));
        car.setAttribute('cx', spline[i][0]);
        car.setAttribute('cy', spline[i][1]);
        let seg = 0;
        while (seg + 1 < segments.length && bounds[seg + 1] <= i) seg++;
        car.setAttribute('fill', pxColour(segPx[seg]));
        ui.progress.textContent = `Segment ${seg + 1} of ${segments.length} \u00b7 PX ${Number(segPx[seg]).toFixed(2)}`;
        if (f < 1) frameId = requestAnimationFrame(stepFrame);
      };
      frameId = requestAnimationFrame(stepFrame);
    }

    (async () => {
      if (!lap || !lap.finished || lap.time == null) {
        ui.stars.textContent = `The simulated player did not finish the lap: ${starsText(0)}`;
        return;
      }
      const { spline: _omit, ...small } = puzzle;
      const res = await sf().api('POST', '/v1/racetrack/check', {
        json: { level: { ...level, puzzle: small }, lap_time: lap.time },
      });
      if (!alive) return;
      if (!res.ok) ui.message.textContent = problemText(res);
      else if (!res.body.valid) ui.message.textContent = res.body.reason;
      else
        ui.stars.textContent =
          `Lap ${res.body.lap_time.toFixed(1)} s (stars at ${res.body.thresholds.map((t) => t.toFixed(1)).join(' / ')} s): ` +
          starsText(res.body.stars);
    })();
    animate();
    return () => {
      alive = false;
      cancelAnimationFrame(frameId);
    };
  }

  // ---- wiring ----

  const GAMES = { digger: playDigger, lattice: playLattice, racetrack: playRacetrack };

  function stop() {
    if (leave) leave();
    leave = null;
  }

  document.addEventListener('starforge:level', (event) => {
    stop();
    const { level, root } = event.detail || {};
    if (!root || !level) return;
    const game = GAMES[level.kind];
    if (!game || !window.starforge) {
      root.replaceChildren();
      root.hidden = true;
      return;
    }
    leave = game(level, root);
  });

  document.addEventListener('starforge:leave', () => {
    stop();
    const root = document.getElementById('play');
    if (root) {
      root.replaceChildren();
      root.hidden = true;
    }
  });
})();
