// Dice Arena: the page over the JSON API of play/web/app.py.  No build step, no libraries.
// Every game text on this page is the server's (the narrator's lines, the engine's and the
// terminal's reasons); the page only draws dice, tables and buttons around them.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const DELAY = params.has("delay") ? Math.max(0, Number(params.get("delay")) || 0) : 450;
const CHARGE_DELAY = Math.min(DELAY, 140);
const NAME_RE = /^[\p{L}\p{N}_ .'-]{1,40}$/u;

let SETUP = null;       // GET /api/setup
let choice = { game: null };
let state = null;       // the last state from the server
let gameId = null;
let selected = new Set(); // indices of the person's dice clicked
let mode = "reroll";    // what a click marks: "reroll" or "keep"
let busy = false;       // a move is on its way or being revealed
let skipping = false;
let coachOn = false;
let coachData = null;
let shared = null;      // at a shared table: { id, token (null for a spectator) }
let events = null;      // the table's EventSource
let refreshing = false; // a table refresh is on its way
let again = false;      // another change came meanwhile
let requestId = null;   // the game or table being made: the same id when the button is clicked twice
let starting = false;   // a start request is on its way: Start is disabled meanwhile
let tried = false;      // the person touched the dice this turn: a refused choice is then an error
let triedTurn = null;   // the turn "tried" is about
let lastMoves = {};     // seat -> { hand, keep, rolled }: each seat's last roll, drawn on its seat
let RULES = {};         // game -> GET /api/games-rules/{game}
let replay = null;      // the finished game shown step by step: { data, at }

// ------------------------------------------------------------------ helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const PIPS = {
  1: [[50, 50]], 2: [[27, 27], [73, 73]], 3: [[27, 27], [50, 50], [73, 73]],
  4: [[27, 27], [73, 27], [27, 73], [73, 73]], 5: [[27, 27], [73, 27], [50, 50], [27, 73], [73, 73]],
  6: [[27, 25], [73, 25], [27, 50], [73, 50], [27, 75], [73, 75]],
};

function die(value, size = 40, extra = "") {
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 100 100");
  svg.setAttribute("width", size);
  svg.setAttribute("height", size);
  svg.setAttribute("class", "die " + extra);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `die showing ${value}`);
  svg.dataset.value = value;
  const face = document.createElementNS(NS, "rect");
  for (const [k, v] of Object.entries({ x: 5, y: 5, width: 90, height: 90, rx: 18, class: "face" })) face.setAttribute(k, v);
  svg.append(face);
  if (!PIPS[value]) { // a die of more than six faces shows its number
    const label = document.createElementNS(NS, "text");
    for (const [k, v] of Object.entries({ x: 50, y: 52, "text-anchor": "middle", "dominant-baseline": "central",
      class: "number" })) label.setAttribute(k, v);
    label.textContent = String(value);
    svg.append(label);
  }
  for (const [cx, cy] of PIPS[value] || []) {
    const pip = document.createElementNS(NS, "circle");
    pip.setAttribute("cx", cx);
    pip.setAttribute("cy", cy);
    pip.setAttribute("r", value === 1 ? 12 : 9.5);
    pip.setAttribute("class", value === 1 ? "pip one" : "pip");
    svg.append(pip);
  }
  return svg;
}

function diceRow(values, size, cls = "") {
  const row = el("span", { class: "dice " + cls });
  for (const v of values || []) row.append(die(v, size));
  return row;
}

// A seat's hand after its last roll: the dice it kept, then the dice it rolled (marked;
// only these move when the roll is shown).
function lastMoveRow(hand, last, size) {
  if (!last || key(last.hand) !== key(hand)) return diceRow(hand, size);
  const row = el("span", { class: "dice last-move" });
  for (const v of last.keep) row.append(die(v, size, "kept"));
  for (const v of last.rolled) row.append(die(v, size, "rolled"));
  return row;
}

function lastMoveLine(last) {
  if (!last) return null;
  const kept = last.keep.length ? `kept ${key(last.keep)}, ` : "";
  return el("div", { class: "seat-line last-line" }, el("span", { class: "kept-mark" }, kept),
    el("span", { class: "rolled-mark" }, `rolled ${key(last.rolled)}`));
}

// A roll event as the last move of its seat: what was kept and what was rolled.
function noteRoll(ev) {
  if (ev.seat === undefined || ev.seat === null || !Array.isArray(ev.hand)) return;
  const keep = Array.isArray(ev.keep) ? [...ev.keep].sort((a, b) => b - a) : [];
  const rolled = [...ev.hand];
  for (const v of keep) { const j = rolled.indexOf(v); if (j >= 0) rolled.splice(j, 1); }
  lastMoves[ev.seat] = { hand: [...ev.hand], keep, rolled: rolled.sort((a, b) => b - a) };
}

// 421: a hand's place in the ranking and its worth in tokens (GET /api/games-rules/421).
function handRank(game, hand) {
  const rules = RULES[game];
  if (!rules || !rules.ranking || !hand) return null;
  const k = key(hand);
  return rules.ranking.find((r) => r.hand === k) || null;
}

function rankLine(game, hand) {
  const r = handRank(game, hand);
  if (!r) return null;
  const n = RULES[game].ranking.length;
  return el("div", { class: "seat-line rank", title: "the hand's place among all hands, and the tokens it is worth" },
    `${r.hand}: ${ordinal(r.place)} of ${n}, worth ${r.value}`);
}

function ordinal(n) {
  const s = n % 100 >= 11 && n % 100 <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
  return n + s;
}

// A seat's status in plain words: "won" / "lost" at two players, "out (made 20)" when out.
function statusWords(st, raw) {
  if (!raw || raw === "in") return "";
  const place = /^made 20, place (\d+)/.exec(raw);
  if (place) return st.players === 2 ? "won" : `made 20, ${ordinal(Number(place[1]))} out`;
  if (raw === "loses") return "lost";
  if (raw === "out, a winner") return st.players === 2 ? "won" : "out (no tokens left: a winner)";
  return raw;
}

const pct = (p) => (100 * p).toFixed(2) + " %";
const pp = (x) => (x < 0.005 ? "0" : x.toFixed(2)) + " pp";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const key = (dice) => [...dice].sort((a, b) => b - a).join("-");

async function api(method, path, body, token) {
  const opts = { method, headers: {} };
  if (token) opts.headers["Authorization"] = "Bearer " + token; // a seat's token, never in a URL sent to the server
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch (e) {
    return { ok: false, status: 0, data: { error: "the server cannot be reached" } };
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = { error: `HTTP ${res.status}` }; }
  return { ok: res.ok, status: res.status, data };
}

function playerName() {
  const v = $("player").value.trim();
  return NAME_RE.test(v) ? v : "guest";
}

// The name as typed (the API says why one is refused); empty: a guest.
function typedName() {
  const v = $("player").value.trim();
  return v === "" ? "guest" : v;
}

// Ask the server about a changed name: its 422 message is shown next to the field.
async function checkName() {
  const name = typedName();
  const res = await api("GET", "/api/records?player=" + encodeURIComponent(name));
  const bad = res.status === 422;
  $("player").classList.toggle("invalid", bad);
  $("player").setAttribute("aria-invalid", String(bad));
  $("player-error").textContent = bad ? res.data.error : "";
  $("player-error").classList.toggle("hidden", !bad);
  if (!bad) { localStorage.setItem("dice-arena-player", name); loadRecords(); }
  return !bad;
}

// ------------------------------------------------------------------ setup
function gameSpec() { return SETUP.games.find((g) => g.name === choice.game); }

function renderSetup() {
  const spec = gameSpec();
  const seg = $("game-choice");
  seg.replaceChildren(...SETUP.games.map((g) => el("button", {
    class: g.name === choice.game ? "on" : "", role: "radio", "aria-checked": String(g.name === choice.game),
    "data-game": g.name, onclick: () => { choice = { game: g.name, play: choice.play }; requestId = null; renderSetup(); },
  }, g.name)));
  loadHowTo(spec.name);
  $("game-title").textContent = spec.title;
  const players = $("players");
  const n = choice.players || spec.min_players;
  players.replaceChildren(...Object.keys(spec.tables).map((k) => el("option", { value: k, selected: Number(k) === n }, k)));
  const table = spec.tables[String(n)];
  const seat = $("seat");
  const seatValue = choice.seat ?? "random";
  seat.replaceChildren(el("option", { value: "random" }, "random"),
    ...table.seats.map((name, i) => el("option", { value: String(i) }, `${name}${i === 0 ? " (moves first)" : ""}`)));
  seat.value = String(seatValue) in table.seats ? String(seatValue) : "random";
  if (!(Number(seat.value) < n)) seat.value = "random";
  const friends = choice.play === "friends";
  for (const b of $("play-mode").querySelectorAll("button")) {
    b.classList.toggle("on", (b.dataset.play === "friends") === friends);
    b.setAttribute("aria-checked", String((b.dataset.play === "friends") === friends));
  }
  $("bots").parentElement.classList.toggle("hidden", friends);
  $("seats-row").classList.toggle("hidden", !friends);
  $("friends-note").classList.toggle("hidden", !friends);
  $("start").textContent = friends ? "Create the table" : "Start the game";
  if (friends) {
    seat.querySelector('option[value="random"]').remove();
    if (seat.value === "random" || seat.value === "") seat.value = "0";
    const mine = Number(seat.value);
    choice.kinds = (choice.kinds || []).slice(0, n);
    $("seat-kinds").replaceChildren(...table.seats.map((name, i) => {
      if (i === mine) { choice.kinds[i] = "person"; return el("label", { class: "bot" }, el("span", { class: "muted" }, name), el("strong", {}, "you")); }
      const current = choice.kinds[i] === "person" || table.bots.includes(choice.kinds[i]) ? choice.kinds[i] : "person";
      choice.kinds[i] = current;
      const sel = el("select", { "data-seat": i, "aria-label": `who plays ${name}`,
        onchange: (e) => { choice.kinds[i] = e.target.value; requestId = null; } },
        el("option", { value: "person", selected: current === "person" }, "a friend"),
        ...table.bots.map((b) => el("option", { value: b, selected: b === current }, "bot: " + b)));
      return el("label", { class: "bot" }, el("span", { class: "muted" }, name), sel);
    }));
  }
  // one select per other seat, clockwise from the person's
  const bots = $("bots");
  const me = seat.value === "random" ? null : Number(seat.value);
  choice.bots = (choice.bots || []).slice(0, n - 1);
  bots.replaceChildren(...Array.from({ length: n - 1 }, (_, i) => {
    const label = me === null ? `opponent ${i + 1}` : table.seats[(me + 1 + i) % n];
    // the table's default (the terminal's) until the person picks another bot for this table
    const picked = choice.picked && choice.picked[i] && table.bots.includes(choice.picked[i]);
    const current = picked ? choice.picked[i] : table.default_bot;
    choice.bots[i] = current;
    const sel = el("select", { "data-i": i, "aria-label": `bot at ${label}`,
      onchange: (e) => { choice.picked = choice.picked || []; choice.picked[i] = e.target.value; choice.bots[i] = e.target.value; requestId = null; } },
      ...table.bots.map((b) => el("option", { value: b, selected: b === current }, b)));
    return el("label", { class: "bot" }, el("span", { class: "muted" }, label), sel);
  }));
  const opts = $("options-row");
  opts.replaceChildren(...spec.options.flatMap((o) => [el("label", { class: "label", for: "opt-" + o.name },
    o.name[0].toUpperCase() + o.name.slice(1)),
    el("input", { type: "number", id: "opt-" + o.name, min: o.low, max: o.high, value: choice[o.name] ?? o.default,
      class: "narrow", title: o.help, oninput: (e) => { choice[o.name] = e.target.value; } }),
    el("span", { class: "muted" }, `${o.help} (${o.low} to ${o.high})`)]));
  opts.classList.toggle("hidden", spec.options.length === 0);
}

function readSetup() {
  const spec = gameSpec();
  const n = Number($("players").value);
  const body = { game: spec.name, players: n, player: typedName() };
  // no bot picked by hand: the server seats its default (the terminal's), for these options too
  if (choice.picked && choice.picked.slice(0, n - 1).some((b) => b)) body.bots = choice.bots.slice(0, n - 1);
  if ($("seat").value !== "random") body.seat = Number($("seat").value);
  const seed = $("seed").value.trim();
  if (seed !== "") body.seed = Number(seed);
  body.options = {};
  for (const o of spec.options) body.options[o.name] = Number($("opt-" + o.name).value);
  return body;
}

function newRequestId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function setStarting(on) {
  starting = on;
  const b = $("start");
  b.disabled = on;
  b.setAttribute("aria-busy", String(on));
  b.textContent = on ? "starting..." : choice.play === "friends" ? "Create the table" : "Start the game";
}

async function startGame() {
  if (starting) return; // one click, one game: the button is disabled until the answer
  $("setup-error").textContent = "";
  if (!requestId) requestId = newRequestId(); // sent again (a retry) it is the same game
  setStarting(true);
  try {
    if (choice.play === "friends") return await createTable();
    await startWith({ ...readSetup(), request_id: requestId });
  } finally {
    setStarting(false);
  }
}

async function startWith(body) {
  const res = await api("POST", "/api/games", body);
  if (!res.ok) { $("setup-error").textContent = res.data.error; return false; }
  requestId = null;
  closeReplay();
  gameId = res.data.id;
  history.replaceState(null, "", "#" + gameId);
  clearCoach();
  lastMoves = {};
  showGame(true);
  clearLog();
  state = res.data.state;
  selected.clear();
  renderFrame(state, true, res.data.steps);
  await reveal(res.data.steps, state, blankView(state, res.data.steps));
  render(state);
  return true;
}

// ------------------------------------------------------------------ the game
function showGame(on) {
  $("setup").classList.toggle("hidden", on);
  $("game").classList.toggle("hidden", !on);
  $("log-card").classList.toggle("hidden", !on);
  $("coach-card").classList.toggle("hidden", !on);
}

function clearLog() { $("log").replaceChildren(); }

function logLine(text, cls = "") {
  const log = $("log");
  log.append(el("li", { class: cls }, text)); // the narrator's line as the terminal prints it
  log.scrollTop = log.scrollHeight;
}

// The table as drawn: seat cards from a "view" (the state's table, changed step by step
// while the bots' moves are revealed).  420 and 421 have drawings of their own; any
// other game sends the generic view (kind "seats"): per seat a score, a detail, a line
// and the dice to show, a figure in the middle, whose turn; each step carries its view.
const OWN_DRAWING = new Set(["420", "421"]);

function seatCards(st, view) {
  const cards = [];
  for (const s of st.seats) {
    const t = view.seats[s.seat];
    const toMove = view.to_move === s.seat;
    const won = t.won || /made 20|winner/.test(t.status);
    const lost = t.lost || t.status === "loses";
    const classes = ["seat", s.you ? "you" : "", toMove ? "moving" : "", lost ? "lost" : "",
      won ? "won" : ""].join(" ");
    const label = s.you ? "you" : st.shared && s.kind === "person" ? (s.player || "invited") : s.bot;
    const head = el("div", { class: "seat-head" },
      el("span", { class: "seat-name" }, s.name),
      el("span", { class: "seat-label" + (st.shared && s.kind === "person" && !s.you ? " person" : "") }, label),
      view.kind === "421" && t.leader ? el("span", { class: "badge lead" }, "leads") : null);
    const body = el("div", { class: "seat-body" });
    if (!OWN_DRAWING.has(view.kind)) {
      body.append(t.dice && t.dice.length ? diceRow(t.dice, 34) : el("span", { class: "muted small" }, "—"));
      body.append(el("span", { class: "score" }, String(t.score ?? ""),
        t.detail ? el("small", { class: "muted" }, " " + t.detail) : null));
    } else if (view.kind === "420") {
      const out = /^made 20/.test(t.status || "");
      body.append(t.hand ? lastMoveRow(t.hand, lastMoves[s.seat], 34)
        : el("span", { class: "muted" }, out ? "out (made 20)" : "not rolled"));
      body.append(el("span", { class: "total" + (t.total === view.target ? " twenty" : t.total > view.target ? " over" : "") },
        t.total === null || t.total === undefined ? "" : String(t.total)));
    } else {
      const hand = view.current && view.current[s.seat];
      body.append(hand ? lastMoveRow(hand, lastMoves[s.seat], 30) : el("span", { class: "muted small" }, "—"));
      body.append(el("span", { class: "tokens", title: `${t.tokens} tokens` },
        el("span", { class: "chip" }), String(t.tokens)));
    }
    const status = statusWords(st, t.status);
    const last = OWN_DRAWING.has(view.kind) ? lastMoves[s.seat] : null;
    const shown = view.kind === "420" ? t.hand : view.current && view.current[s.seat];
    const hand421 = view.kind === "421" ? shown : null;
    cards.push(el("div", { class: classes, "data-seat": s.seat }, head, body,
      t.line ? el("div", { class: "seat-line" }, t.line) : null,
      last && shown && key(last.hand) === key(shown) ? lastMoveLine(last) : null,
      hand421 ? rankLine(st.game, hand421) : null,
      el("div", { class: "seat-status" }, status)));
  }
  return cards;
}

function currentDice421(round) {
  const cur = {};
  if (!round) return cur;
  for (const e of round.entries) if (e.seat !== null && e.hand) cur[e.seat] = e.hand;
  return cur;
}

function viewOf(st) {
  const view = JSON.parse(JSON.stringify(st.table));
  view.to_move = st.to_move;
  if (view.kind === "421") view.current = currentDice421(view.round);
  return view;
}

function drawTable(st, view) {
  const table = $("table");
  table.className = "table n" + st.players;
  const cards = seatCards(st, view);
  if (view.centre) {
    const c = view.centre;
    cards.unshift(el("div", { class: "pot centre" }, el("span", { class: "muted" }, c.label || ""),
      el("span", { class: "pot-count" }, String(c.value ?? "")), el("span", { class: "muted small" }, c.small || "")));
  } else if (view.kind === "421") {
    cards.unshift(el("div", { class: "pot" }, el("span", { class: "muted" }, "pot"),
      el("span", { class: "pot-count" }, String(view.pot)), el("span", { class: "muted small" }, `of ${view.initial_pot}`)));
  }
  table.replaceChildren(...cards);
  drawRound(view);
}

function roundBlock(round, title) {
  const box = el("div", { class: "round-box" }, el("div", { class: "round-title" }, title || round.title || ""));
  const list = el("ul", { class: "round-entries" });
  for (const e of round.entries) {
    if (e.kind === "turn_end" && !e.text) continue;
    list.append(el("li", { class: "entry " + e.kind },
      e.hand && e.kind !== "turn_end" && e.kind !== "stop" ? diceRow(e.hand, 20) : null,
      el("span", {}, (e.text || "").trim())));
  }
  box.append(list);
  return box;
}

function drawRound(view) {
  const box = $("round");
  if (view.kind !== "421" || !view.round) { box.classList.add("hidden"); return; }
  box.classList.remove("hidden");
  const parts = [roundBlock(view.round)];
  if (view.previous_round) {
    const summary = (view.previous_round.result || view.previous_round.title || "").split(/\n\s*Tokens:/)[0];
    const details = el("details", { class: "previous" },
      el("summary", {}, "Previous round: " + summary.replace(/\s+/g, " ").replace(/^\s*->\s*/, "").trim()));
    details.append(roundBlock(view.previous_round));
    parts.push(details);
  }
  box.replaceChildren(...parts);
}

// One event applied to the view while revealing (the server's state replaces it at the end).
function applyStep(view, ev, text) {
  const t = ev.type;
  if (!OWN_DRAWING.has(view.kind)) return ev.seat ?? null;
  if (view.kind === "420") {
    if (t === "roll") {
      noteRoll(ev);
      view.seats[ev.seat].hand = ev.hand;
      view.seats[ev.seat].total = ev.hand.reduce((a, b) => a + b, 0);
      view.to_move = ev.seat;
    } else if (t === "round") {
      for (const s of view.seats) { s.hand = null; s.total = null; }
    } else if (t === "round_won") {
      view.seats[ev.seat].status = `made 20, place ${ev.place}`;
    }
    return ev.seat;
  }
  if (t === "round") {
    view.previous_round = view.round;
    view.round = { phase: ev.phase, order: ev.order, leader: ev.leader ?? null, title: text, entries: [], result: null };
    view.current = {};
    for (const s of view.seats) s.leader = ev.leader === s.seat;
    return null;
  }
  if (!view.round) return null;
  if (["roll", "reroll", "rampo_roll"].includes(t)) noteRoll(ev);
  if (["roll", "reroll", "rampo_roll", "stop", "turn_end"].includes(t)) {
    view.round.entries.push({ seat: ev.seat, kind: t, hand: ev.hand, keep: ev.keep, text });
    if (ev.hand) view.current[ev.seat] = ev.hand;
    view.to_move = ev.seat;
    return ev.seat;
  }
  if (text) view.round.entries.push({ seat: null, kind: t, hand: null, keep: null, text });
  if (t === "take" || t === "give") {
    view.round.result = text;
    ev.tokens.forEach((n, s) => { view.seats[s].tokens = n; });
    if (t === "take") view.pot = ev.pot;
  }
  if (t === "leave") view.seats[ev.seat].status = "out, a winner";
  return null;
}

async function reveal(steps, finalState, view) {
  if (!steps || !steps.length) return;
  busy = true;
  skipping = DELAY === 0;
  $("skip").classList.toggle("hidden", DELAY === 0);
  setTurnEnabled(false);
  for (const step of steps) {
    let seat;
    if (step.view) { // the server's table after this step
      view = JSON.parse(JSON.stringify(step.view));
      seat = step.event.seat ?? null;
    } else {
      seat = applyStep(view, step.event, step.text);
    }
    if (!step.text) continue;
    logLine(step.text, step.event.type);
    if (!skipping) {
      drawTable(finalState, view);
      if (seat !== null && seat !== undefined && /roll|bust/.test(step.event.type)) {
        const card = document.querySelector(`#table .seat[data-seat="${seat}"] .dice`);
        if (card) card.classList.add("rolling"); // only its rolled dice move (style.css)
      }
      await sleep(step.event.phase === "charge" ? CHARGE_DELAY : DELAY);
    }
  }
  $("skip").classList.add("hidden");
  busy = false;
}

// What the table looked like before the steps of a response (the log is rebuilt from scratch).
// The game's options, and its seed once the game is over (the server keeps it back while
// the game is played: it predicts every roll to come).
function metaText(st) {
  const meta = Object.entries(st.options).map(([k, v]) => `${k} ${v}`);
  if (st.seed !== null && st.seed !== undefined) meta.unshift(`seed ${st.seed}`);
  return meta.join(" · ");
}

function gameTitle(st) {
  const where = st.seat === null || st.seat === undefined ? "watching" : `you are ${st.seats[st.seat].name}`;
  return `${st.game} · ${st.players} players · ${st.shared ? "shared table · " : ""}${where}`;
}

function renderFrame(st, fresh, steps) {
  $("game-name").textContent = gameTitle(st);
  $("game-meta").textContent = metaText(st);
  if (fresh) drawTable(st, blankView(st, steps));
  $("result").classList.add("hidden");
  $("turn").classList.add("hidden");
  setTurnEnabled(false);
}

// The table before anything was rolled (the steps of a new game are revealed onto it).
function blankView(st, steps) {
  if (steps && steps.length && steps[0].view) {
    const first = JSON.parse(JSON.stringify(steps[0].view));
    first.to_move = null;
    return first;
  }
  const view = viewOf(st);
  if (!OWN_DRAWING.has(view.kind)) return view;
  if (view.kind === "420") for (const s of view.seats) { s.hand = null; s.total = null; s.status = "in"; }
  else {
    view.round = null; view.previous_round = null; view.current = {}; view.pot = view.initial_pot;
    for (const s of view.seats) { s.tokens = 0; s.leader = false; s.status = "in"; }
  }
  view.to_move = null;
  return view;
}

function render(st) {
  state = st;
  const view = viewOf(st);
  drawTable(st, view);
  $("game-name").textContent = gameTitle(st);
  $("game-meta").textContent = metaText(st);
  const result = $("result");
  if (st.over && st.shared && (st.seat === null || st.seat === undefined)) {
    result.className = "result";
    result.replaceChildren(el("strong", {}, "Game over."), el("span", {}, st.result));
  } else if (st.over) {
    result.className = "result " + (st.outcome > 0 ? "win" : "lose");
    result.replaceChildren(el("strong", {}, st.outcome > 0 ? "You win!" : "You lose."), el("span", {}, st.result));
  } else {
    result.className = "result hidden";
  }
  drawTurn(st);
  drawStatus(st);
  drawCoachCard(st);
  if (RULES[st.game]) { drawHowTo(st.game); } else loadHowTo(st.game);
  if (st.over && !st.shared) loadRecords();
}

// At a shared table: whose turn it is, or whom the table waits for.
function drawStatus(st) {
  const box = $("table-status");
  const give = $("give-to-bot");
  box.classList.toggle("hidden", !st.shared || st.over);
  give.classList.add("hidden");
  if (!st.shared || st.over) return;
  box.classList.toggle("mine", !!st.waiting);
  let text = "";
  if (st.waiting) text = "Your turn.";
  else if (st.waiting_for) text = `Waiting for ${st.waiting_for}…`;
  else text = "The bots are playing…";
  $("table-status-text").textContent = text;
  if (st.creator && st.waiting_for && !st.waiting) {
    const who = st.seats[st.to_move];
    give.textContent = `Let a bot play for ${who.player || who.name}`;
    give.dataset.seat = String(st.to_move);
    give.title = "allowed once the seat has kept the table waiting a while";
    give.classList.remove("hidden");
  }
}

function setTurnEnabled(on) {
  $("turn").classList.toggle("waiting-bots", !on);
}

function drawTurn(st) {
  const turn = $("turn");
  $("move-error").textContent = "";
  $("stop-why").textContent = "";
  if (!st.waiting) {
    turn.classList.add("hidden");
    return;
  }
  if (triedTurn !== `${st.id}:${st.turn}`) { tried = false; triedTurn = `${st.id}:${st.turn}`; }
  turn.classList.remove("hidden");
  setTurnEnabled(true);
  const t = st.table;
  const withDice = Array.isArray(st.hand);
  for (const id of ["mode", "my-dice", "choice"]) $(id).classList.toggle("hidden", !withDice);
  $("roll").parentElement.classList.toggle("hidden", !withDice); // reroll and stop
  if (!withDice) { drawMoveButtons(st); return; }
  let title;
  if (st.turn_title) title = st.turn_title;
  else if (t.kind === "420") title = `Your turn: ${key(st.hand)} (${st.hand.reduce((a, b) => a + b, 0)}). Click the dice to reroll.`;
  else if (t.leader === st.seat) title = `Your turn: you lead, roll ${t.rolls_used} of at most ${t.rolls_allowed}.`;
  else title = `Your turn: roll ${t.rolls_used} of ${t.rolls_allowed} (the leader made ${t.rolls_allowed}).`;
  $("turn-title").textContent = title;
  $("mode").classList.remove("hidden");
  for (const b of $("mode").querySelectorAll("button")) b.classList.toggle("on", b.dataset.mode === mode);
  const dice = $("my-dice");
  dice.replaceChildren(...st.hand.map((v, i) => {
    const picked = selected.has(i);
    const rerolled = mode === "reroll" ? picked : !picked;
    const b = el("button", { class: "my-die" + (rerolled ? " reroll" : " kept"), "data-i": i, "data-value": v,
      "aria-pressed": String(picked), title: rerolled ? "rerolled" : "kept", onclick: () => toggleDie(i) },
      die(v, 64), el("span", { class: "tag" }, rerolled ? "reroll" : "keep"));
    return b;
  }));
  const stop = $("stop");
  stop.classList.toggle("hidden", !st.has_stop);
  if (st.stop) {
    stop.classList.toggle("blocked", !st.stop.ok);
    stop.setAttribute("aria-disabled", String(!st.stop.ok));
    stop.title = st.stop.ok ? st.stop.text : st.stop.why;
    stop.textContent = st.stop.ok ? `Stop with ${key(st.hand)}` : "Stop";
  }
  const legal = $("legal");
  const moves = st.legal.filter((m) => !(st.stop && st.stop.ok && m.action === st.stop.action));
  legal.replaceChildren(el("span", { class: "muted" }, "Legal moves: "),
    ...moves.map((m) => el("button", { class: "chip-move", "data-action": m.action, onclick: () => pickAction(m.action) }, m.text)));
  drawChoice();
}

// A game whose moves are no dice: one button per legal move, in the game's words.
function drawMoveButtons(st) {
  $("turn-title").textContent = st.turn_title || "Your turn.";
  $("stop").classList.add("hidden");
  $("choice").textContent = "";
  const legal = $("legal");
  legal.replaceChildren(...st.legal.map((m, i) => el("button", {
    class: "move" + (i === 0 ? " primary" : ""), "data-action": m.action,
    onclick: () => sendMove({ action: m.action }) }, m.text)));
}

function rerollDice() {
  const hand = state.hand;
  const picked = hand.filter((_, i) => selected.has(i));
  const rest = hand.filter((_, i) => !selected.has(i));
  return mode === "reroll" ? picked : rest;
}

function currentChoice() {
  return state && state.waiting && Array.isArray(state.hand) ? state.choices[key(rerollDice())] : null;
}

function drawChoice() {
  const c = currentChoice();
  const box = $("choice");
  const roll = $("roll");
  const reroll = rerollDice();
  if (!c) { box.textContent = ""; return; }
  if (!c.ok && !tried) { // nothing tried yet: a prompt, not an error
    box.className = "choice hint";
    box.textContent = (state.has_stop ? "Click the dice to reroll, or stop. " : "Click the dice to reroll. ") +
      c.why[0].toUpperCase() + c.why.slice(1) + ".";
  } else {
    box.className = "choice " + (c.ok ? "ok" : "bad");
    box.textContent = c.ok ? "✓ " + c.text : "✗ " + c.why;
  }
  roll.textContent = reroll.length ? `Reroll ${key(reroll)}` : "Reroll";
  roll.classList.toggle("blocked", !c.ok);
  roll.setAttribute("aria-disabled", String(!c.ok));
  for (const b of document.querySelectorAll(".chip-move")) b.classList.toggle("on", c.ok && Number(b.dataset.action) === c.action);
  highlightCoach();
}

function toggleDie(i) {
  if (busy) return;
  tried = true;
  if (selected.has(i)) selected.delete(i); else selected.add(i);
  drawTurn(state);
}

function pickAction(action) {
  tried = true;
  // select the dice of the move: the dice it rerolls (or keeps, in keep mode)
  const k = Object.keys(state.choices).find((k) => state.choices[k].ok && state.choices[k].action === action);
  if (k === undefined) return;
  const reroll = k === "" ? [] : k.split("-").map(Number);
  const want = [...reroll];
  const marks = new Set();
  state.hand.forEach((v, i) => { const j = want.indexOf(v); if (j >= 0) { want.splice(j, 1); marks.add(i); } });
  selected = mode === "reroll" ? marks : new Set(state.hand.map((_, i) => i).filter((i) => !marks.has(i)));
  drawTurn(state);
}

async function sendMove(body) {
  if (busy) return;
  busy = true;
  $("move-error").textContent = "";
  body.turn = state.turn;
  const before = viewOf(state);
  const res = shared
    ? await api("POST", `/api/tables/${shared.id}/moves`, body, shared.token)
    : await api("POST", `/api/games/${gameId}/moves`, body);
  busy = false;
  if (!res.ok && shared) {
    await refreshTable();
    $("move-error").textContent = res.data.error;
    return;
  }
  if (!res.ok) { // e.g. the move was refused, or played first from another page: show the game as it is
    const again = await api("GET", `/api/games/${gameId}`);
    if (again.ok) {
      if (again.data.state.events !== state.events) { // moved on meanwhile: the narration as it is now
        clearLog();
        for (const line of again.data.state.log) logLine(line);
      }
      render(again.data.state);
    }
    $("move-error").textContent = res.data.error;
    return;
  }
  selected.clear();
  $("turn").classList.add("hidden");
  await reveal(res.data.steps, res.data.state, before);
  render(res.data.state);
  if (shared) { if (again) refreshTable(); return; }
  if (coachOn || res.data.state.over) await loadCoach();
}

function onRoll() {
  const c = currentChoice();
  if (!c || !c.ok) {
    tried = true;
    drawChoice();
    flash($("choice"));
    return; // an illegal choice is never sent: the line above says why
  }
  sendMove({ reroll: rerollDice() });
}

function onStop() {
  if (!state.stop) return;
  if (!state.stop.ok) {
    $("stop-why").textContent = state.stop.why;
    flash($("stop-why"));
    return;
  }
  sendMove({ stop: true });
}

function flash(node) {
  node.classList.remove("flash");
  void node.offsetWidth;
  node.classList.add("flash");
}

// ------------------------------------------------------------------ the coach
// A new game: nothing of the last game's coach stays (its review, its position, its note).
function clearCoach() {
  coachData = null;
  $("coach-position").replaceChildren();
  $("coach-position").dataset.turn = "";
  $("coach-review").replaceChildren();
  $("coach-review").dataset.turn = "";
  $("coach-note").textContent = "";
  $("coach-none").classList.add("hidden");
}

function drawCoachCard(st) {
  $("coach-card").classList.remove("hidden");
  const none = $("coach-none");
  if (!st.coach) {
    none.classList.remove("hidden");
    none.textContent = "No coach for this table: " + st.coach_why_not + ".";
    $("ask-coach").classList.add("hidden");
    $("coach-position").replaceChildren();
    $("coach-review").replaceChildren();
    $("coach-note").textContent = "";
    return;
  }
  none.classList.add("hidden");
  $("ask-coach").classList.remove("hidden");
  $("ask-coach").textContent = coachOn ? "Hide the coach" : "Ask the coach";
  if (!coachOn && !st.over) { $("coach-position").replaceChildren(); if (!st.over) $("coach-review").replaceChildren(); }
  if (coachOn && coachData) drawCoach(coachData);
}

async function loadCoach() {
  if (!state || !state.coach) return;
  const asked = gameId;
  const res = await api("GET", `/api/games/${asked}/coach`);
  if (asked !== gameId) return; // another game meanwhile: this coach is not its
  if (!res.ok) { $("coach-note").textContent = res.data.error; return; }
  coachData = res.data;
  drawCoach(coachData);
}

function drawCoach(data) {
  const pos = $("coach-position");
  pos.replaceChildren();
  const current = state && data.turn === state.turn; // advice for an earlier position is not shown
  pos.dataset.turn = current ? String(data.turn) : "";
  if (data.position && coachOn && current) {
    const p = data.position;
    pos.append(el("p", { class: "coach-value" }, "Your chance to win from here: ", el("strong", {}, pct(p.value))),
      el("p", { class: "muted small" }, p.position));
    const table = el("table", { class: "coach-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "move"), el("th", {}, "win"), el("th", {}, "cost"))));
    const tbody = el("tbody");
    for (const m of p.moves) {
      tbody.append(el("tr", { class: m.best ? "best" : "", "data-action": m.action },
        el("td", {}, (m.best ? "★ " : "") + m.text), el("td", {}, pct(m.p)), el("td", {}, m.best ? "best" : pp(m.cost_pp))));
    }
    table.append(tbody);
    pos.append(table);
  }
  const rev = $("coach-review");
  rev.replaceChildren();
  rev.dataset.turn = current ? String(data.turn) : "";
  if (data.review.length && (coachOn || state.over) && current) {
    rev.append(el("h3", {}, state.over ? "Review of your moves" : "Your moves so far"));
    const table = el("table", { class: "coach-table review" },
      el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "you played"), el("th", {}, "best"), el("th", {}, "cost"))));
    const tbody = el("tbody");
    for (const r of data.review) {
      tbody.append(el("tr", { class: r.cost_pp > 0.005 ? "mistake" : "good" },
        el("td", {}, String(r.move)),
        el("td", {}, r.made.text, el("br"), el("span", { class: "muted small" }, pct(r.made.p))),
        el("td", {}, r.best.action === r.made.action ? "✓ same" : r.best.text, el("br"),
          el("span", { class: "muted small" }, pct(r.best.p))),
        el("td", {}, pp(r.cost_pp))));
    }
    table.append(tbody);
    rev.append(table, el("p", { class: "small" },
      `${data.mistakes} of ${data.review.length} moves below the best; total cost ${pp(data.total_cost_pp)}.`));
  }
  $("coach-note").textContent = data.note || "";
  highlightCoach();
}

function highlightCoach() {
  const c = currentChoice();
  for (const row of document.querySelectorAll("#coach-position tr[data-action]")) {
    row.classList.toggle("chosen", !!(c && c.ok && Number(row.dataset.action) === c.action));
  }
}

// ------------------------------------------------------------------ records
async function loadRecords() {
  const res = await api("GET", "/api/records?player=" + encodeURIComponent(playerName()));
  const box = $("records");
  if (!res.ok) { box.textContent = res.data.error; return; }
  const data = res.data;
  if (!data.records.length) {
    box.replaceChildren(el("p", { class: "muted" }, `No finished games yet for ${data.player}.`));
    return;
  }
  const table = el("table", { class: "records" }, el("thead", {}, el("tr", {},
    el("th", {}, "game"), el("th", {}, "against"), el("th", {}, "won"), el("th", {}, "lost"), el("th", {}, ""))));
  const tbody = el("tbody");
  for (const r of data.records) {
    const share = r.games ? r.wins / r.games : 0;
    tbody.append(el("tr", {},
      el("td", {}, `${r.game} (${r.players})`), el("td", {}, r.opponents),
      el("td", {}, String(r.wins)), el("td", {}, String(r.losses)),
      el("td", {}, el("span", { class: "bar" }, el("span", { style: `width:${Math.round(100 * share)}%` })))));
  }
  table.append(tbody);
  const recent = el("ul", { class: "recent" });
  for (const g of data.recent.slice(0, 5)) {
    recent.append(el("li", {}, el("span", { class: g.outcome > 0 ? "won" : "lost" }, g.outcome > 0 ? "won" : "lost"),
      ` ${g.game} vs ${g.opponents} · seed ${g.seed} `,
      el("button", { class: "ghost small replay-open", "data-id": g.id, title: "watch this game again, step by step",
        onclick: () => openReplay(g.id) }, "Replay")));
  }
  box.replaceChildren(el("p", { class: "muted small" }, `${data.player}: games won / lost against each line-up of bots.`),
    table, el("h3", {}, "Recent games"), recent);
}

// ------------------------------------------------------------------ replay of a finished game
async function openReplay(id) {
  const res = await api("GET", `/api/records/${id}/replay`);
  if (!res.ok) { $("records").prepend(el("p", { class: "error" }, res.data.error)); return; }
  replay = { data: res.data, at: 0, views: replayViews(res.data) };
  $("replay-card").classList.remove("hidden");
  const slider = $("replay-slider");
  slider.max = String(replay.views.length - 1);
  slider.value = "0";
  const r = res.data.record;
  $("replay-title").textContent = `${r.game} · ${r.players} players · vs ${r.opponents} · seed ${r.seed}`;
  showReplayAt(0);
  $("replay-card").scrollIntoView({ block: "start" });
}

// The table after each step that says something (the first: before anything was rolled).
function replayViews(data) {
  const st = data.state;
  const saved = lastMoves;
  lastMoves = {};
  let view = blankView(st, data.steps);
  const out = [{ view: JSON.parse(JSON.stringify(view)), lines: 0, last: {}, text: "the table before the first roll" }];
  let lines = 0;
  for (const step of data.steps) {
    if (step.view) view = JSON.parse(JSON.stringify(step.view));
    else applyStep(view, step.event, step.text);
    if (!step.text) continue;
    lines += 1;
    out.push({ view: JSON.parse(JSON.stringify(view)), lines, last: JSON.parse(JSON.stringify(lastMoves)), text: step.text });
  }
  lastMoves = saved;
  return out;
}

function showReplayAt(i) {
  if (!replay) return;
  const n = replay.views.length;
  i = Math.max(0, Math.min(n - 1, i));
  replay.at = i;
  $("replay-slider").value = String(i);
  $("replay-step").textContent = `step ${i} of ${n - 1}`;
  const frame = replay.views[i];
  const st = replay.data.state;
  const saved = lastMoves;
  lastMoves = frame.last;
  const cards = seatCards(st, frame.view);
  lastMoves = saved;
  $("replay-table").className = "table n" + st.players;
  $("replay-table").replaceChildren(...cards);
  $("replay-text").textContent = frame.text;
  const lines = (st.log || []).slice(0, frame.lines);
  $("replay-log").replaceChildren(...lines.map((t) => el("li", {}, t)));
  $("replay-log").scrollTop = $("replay-log").scrollHeight;
  $("replay-prev").disabled = i === 0;
  $("replay-next").disabled = i === n - 1;
}

function closeReplay() {
  replay = null;
  $("replay-card").classList.add("hidden");
}

// The same game again: the same bots, the same seat, the same options, a new seed.
async function rematch() {
  if (!replay || starting) return;
  const r = replay.data.record;
  $("replay-error").textContent = "";
  setStarting(true);
  try {
    const ok = await startWith({ game: r.game, players: r.players, bots: r.bots, seat: r.seat, options: r.options,
      player: r.player, request_id: newRequestId() });
    if (!ok) $("replay-error").textContent = $("setup-error").textContent;
  } finally {
    setStarting(false);
  }
}

// ------------------------------------------------------------------ how to play
async function loadHowTo(game) {
  if (!RULES[game]) {
    const res = await api("GET", `/api/games-rules/${encodeURIComponent(game)}`);
    if (!res.ok) return;
    RULES[game] = res.data;
    if (state && state.game === game && !busy) drawTable(state, viewOf(state)); // the hands' ranks
  }
  drawHowTo(game);
}

function drawHowTo(game) {
  const rules = RULES[game];
  if (!rules) return;
  $("howto-title").textContent = `How to play ${game}`;
  $("howto-move").textContent = `Your moves: ${rules.how_to_move}.`;
  // the server made this HTML from the game's rules.md, escaping every character of it
  $("howto-rules").innerHTML = rules.html;
  const box = $("howto-ranking");
  if (!rules.ranking) { box.classList.add("hidden"); box.replaceChildren(); return; }
  box.classList.remove("hidden");
  const top = rules.ranking.filter((r) => r.value > 1);
  const list = el("ol", { class: "ranking" }, ...top.map((r) => el("li", { "data-hand": r.hand },
    diceRow(r.hand.split("-").map(Number), 18), ` ${r.hand} · ${r.value} token${r.value === 1 ? "" : "s"}`)));
  box.replaceChildren(el("h3", {}, "Hands, from the best"), list,
    el("p", { class: "muted small" }, `Then every other hand (${rules.ranking.length - top.length} of them), ` +
      "worth 1, by its dice read high to low: 6-6-5 is the best of them and still below 2-2-1."));
  markRanking();
}

// 421: the hands on the table, marked in the ranking.
function markRanking() {
  const on = new Set();
  if (state && state.table && state.table.kind === "421" && state.table.round) {
    for (const e of state.table.round.entries) if (e.hand) on.add(key(e.hand));
  }
  for (const li of document.querySelectorAll("#howto-ranking li[data-hand]")) li.classList.toggle("on", on.has(li.dataset.hand));
}

// ------------------------------------------------------------------ shared tables
function readTable() {
  const body = readSetup();
  const n = body.players;
  return { game: body.game, players: n, seats: choice.kinds.slice(0, n), seat: body.seat ?? 0,
    player: body.player, seed: body.seed, options: body.options };
}

async function createTable() {
  if (!requestId) requestId = newRequestId(); // a second click sends the same request: one table
  clearCoach();
  lastMoves = {};
  const res = await api("POST", "/api/tables", { ...readTable(), request_id: requestId });
  if (!res.ok) { $("setup-error").textContent = res.data.error; return; }
  requestId = null;
  const data = res.data;
  const invites = { invites: data.invites, spectator: data.spectator };
  try { sessionStorage.setItem("dice-arena-invites-" + data.id, JSON.stringify(invites)); } catch (e) { /* private mode */ }
  history.replaceState(null, "", location.pathname + location.search + data.link.slice(1));
  shared = { id: data.id, token: data.token };
  drawInvites(invites);
  await enterTable(data.state, data.steps);
}

function fullLink(link) { return location.origin + location.pathname + location.search + link.slice(1); }

async function copy(text, button) {
  try { await navigator.clipboard.writeText(text); }
  catch (e) { // no clipboard API (plain http, an older browser): select the field's text
    const field = button.previousElementSibling;
    field.select();
    try { document.execCommand("copy"); } catch (e2) { /* the text is selected: Ctrl-C */ }
  }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

function linkRow(link, label) {
  const url = fullLink(link);
  const field = el("input", { readonly: true, value: url, "aria-label": label, onfocus: (e) => e.target.select() });
  const button = el("button", { class: "copy" }, "Copy");
  button.addEventListener("click", () => copy(url, button));
  return [field, button];
}

function drawInvites(data) {
  if (!data) { $("invites-card").classList.add("hidden"); return; }
  $("invites-card").classList.remove("hidden");
  $("invites").replaceChildren(...data.invites.map((i) => el("li", { class: "invite", "data-seat": i.seat },
    el("span", { class: "who" }, `${i.name}'s link`), ...linkRow(i.link, `invite link for ${i.name}`))));
  $("spectator-link").replaceChildren(el("div", { class: "invite" }, ...linkRow(data.spectator, "watch link")));
}

async function enterTable(st, steps) {
  gameId = null;
  $("join").classList.add("hidden");
  showGame(true);
  $("records-card").classList.add("hidden");
  clearLog();
  state = st;
  selected.clear();
  if (steps && steps.length) {
    renderFrame(st, true, steps);
    await reveal(steps, st, blankView(st, steps));
  } else {
    for (const line of st.log || []) logLine(line);
  }
  render(st);
  listen();
}

function listen() {
  if (events) events.close();
  events = new EventSource(`/api/tables/${shared.id}/events`); // the table's id only: no token in it
  events.addEventListener("table", (e) => {
    const data = JSON.parse(e.data);
    if (data.over) { events.close(); events = null; }
    if (!state || data.events !== state.events || data.turn !== state.turn || data.version !== shared.version) {
      shared.version = data.version;
      refreshTable();
    }
  });
}

// The table as the records have it now: the steps this page has not shown, revealed, then the state.
async function refreshTable() {
  if (!shared) return;
  if (refreshing || busy) { again = true; return; }
  refreshing = true;
  again = false;
  const since = state ? state.events : 0;
  const res = await api("GET", `/api/tables/${shared.id}?since=${since}`, undefined, shared.token);
  refreshing = false;
  if (!res.ok) { $("move-error").textContent = res.data.error; return; }
  if (busy || (state ? state.events : 0) !== since) {
    // this page moved meanwhile: its move's steps are shown (or being shown) already, and
    // these steps start where the page was before it; ask again from where it is now
    again = true;
    if (!busy) refreshTable();
    return;
  }
  if (state && res.data.state.turn < state.turn) { if (again) refreshTable(); return; } // older than what is shown
  const before = state ? viewOf(state) : null;
  if (res.data.steps.length && before) {
    state = res.data.state;
    await reveal(res.data.steps, res.data.state, before);
  }
  render(res.data.state);
  if (again) refreshTable();
}

async function openTable(id, token) {
  shared = { id, token: token || null, version: null };
  const res = await api("GET", `/api/tables/${id}`, undefined, shared.token);
  if (!res.ok) {
    shared = null;
    $("setup-error").textContent = res.data.error;
    return false;
  }
  let invites = null;
  try { invites = JSON.parse(sessionStorage.getItem("dice-arena-invites-" + id)); } catch (e) { invites = null; }
  drawInvites(invites && token ? invites : null);
  const st = res.data.state;
  const mine = st.seat !== null ? st.seats[st.seat] : null;
  if (mine && !mine.joined && mine.kind === "person") { // an invitation: take the seat under a name
    $("setup").classList.add("hidden");
    $("join").classList.remove("hidden");
    const host = st.seats.find((s) => s.creator);
    $("join-text").textContent = `${host && host.player ? host.player : "A friend"} invites you to a table of ` +
      `${st.game} (${st.title}) for ${st.players}: your seat is ${mine.name}.`;
    $("join-name").value = playerName();
    return true;
  }
  await enterTable(st, null);
  return true;
}

async function joinTable() {
  $("join-error").textContent = "";
  const name = $("join-name").value.trim();
  if (!NAME_RE.test(name)) { $("join-error").textContent = "a name of 1 to 40 letters, digits, spaces, '.', \"'\", '_' or '-'"; return; }
  const res = await api("POST", `/api/tables/${shared.id}/join`, { name }, shared.token);
  if (!res.ok) { $("join-error").textContent = res.data.error; return; }
  localStorage.setItem("dice-arena-player", name);
  $("player").value = name;
  await enterTable(res.data.state, null);
}

async function giveToBot() {
  const seat = $("give-to-bot").dataset.seat;
  const res = await api("POST", `/api/tables/${shared.id}/seats/${seat}/bot`, {}, shared.token);
  if (!res.ok) { $("move-error").textContent = res.data.error; return; }
  refreshTable();
}

function leaveTable() {
  if (events) events.close();
  events = null;
  shared = null;
  $("invites-card").classList.add("hidden");
  $("records-card").classList.remove("hidden");
  $("table-status").classList.add("hidden");
}

// ------------------------------------------------------------------ start
async function resume(id) {
  const res = await api("GET", `/api/games/${id}`);
  if (!res.ok) { history.replaceState(null, "", location.pathname + location.search); return false; }
  gameId = id;
  showGame(true);
  clearLog();
  for (const line of res.data.state.log) logLine(line);
  render(res.data.state);
  return true;
}

async function main() {
  const saved = localStorage.getItem("dice-arena-player");
  $("player").value = saved && NAME_RE.test(saved) ? saved : "guest";
  $("player").addEventListener("change", checkName);
  const res = await api("GET", "/api/setup");
  SETUP = res.data;
  $("game-names").textContent = SETUP.games.map((g) => g.name).join(" · ");
  choice = { game: SETUP.games[0].name };
  renderSetup();
  $("players").addEventListener("change", (e) => { choice.players = Number(e.target.value); requestId = null; renderSetup(); });
  $("seat").addEventListener("change", (e) => { choice.seat = e.target.value; renderSetup(); });
  $("start").addEventListener("click", startGame);
  $("replay-prev").addEventListener("click", () => showReplayAt(replay.at - 1));
  $("replay-next").addEventListener("click", () => showReplayAt(replay.at + 1));
  $("replay-slider").addEventListener("input", (e) => showReplayAt(Number(e.target.value)));
  $("replay-close").addEventListener("click", closeReplay);
  $("replay-rematch").addEventListener("click", rematch);
  $("play-mode").addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (!b) return;
    choice.play = b.dataset.play;
    requestId = null;
    renderSetup();
  });
  $("join-button").addEventListener("click", joinTable);
  $("give-to-bot").addEventListener("click", giveToBot);
  $("new-game").addEventListener("click", () => {
    leaveTable();
    $("join").classList.add("hidden");
    history.replaceState(null, "", location.pathname + location.search);
    state = null; gameId = null; lastMoves = {};
    clearCoach();
    showGame(false);
    renderSetup();
  });
  $("roll").addEventListener("click", onRoll);
  $("stop").addEventListener("click", onStop);
  $("skip").addEventListener("click", () => { skipping = true; });
  for (const b of $("mode").querySelectorAll("button")) {
    b.addEventListener("click", () => {
      if (b.dataset.mode === mode) return;
      mode = b.dataset.mode;
      // keep the same dice marked as before: flip the selection
      selected = new Set(state.hand.map((_, i) => i).filter((i) => !selected.has(i)));
      drawTurn(state);
    });
  }
  $("ask-coach").addEventListener("click", async () => {
    coachOn = !coachOn;
    drawCoachCard(state);
    if (coachOn) await loadCoach();
    else drawCoach(coachData || { review: [], position: null });
  });
  loadRecords();
  const hash = location.hash.slice(1);
  const table = new URLSearchParams(hash.includes("=") ? hash : params.has("table") ? location.search : "");
  if (table.get("table")) await openTable(table.get("table"), table.get("seat"));
  else if (hash) await resume(hash);
  document.body.dataset.ready = "1";
}

main();
