// The page's style sheet and script, served as files of their own so that the page's policy can forbid every inline
// script: no text a session or a model wrote can run, even if it ever reached the markup unescaped.

export const STYLE = `
:root { --fg: #1d2230; --muted: #5d6475; --line: #dde1ea; --bg: #f7f8fb; --card: #fff;
  --counting: #1f6feb; --parked: #7a4bd1; --checking: #0f7b7b; --stopped: #6b7280; --needs: #c2410c;
  --done: #15803d; --working: #334155; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9f0; --muted: #9aa3b5; --line: #2c3342; --bg: #12151c; --card: #1a1f29; --working: #a9b4c8; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .75rem 1rem;
  border-bottom: 1px solid var(--line); background: var(--card); }
header h1 { font-size: 1.05rem; margin: 0; }
header h1 a { color: inherit; text-decoration: none; }
header .where { color: var(--muted); font-size: .85rem; overflow-wrap: anywhere; }
main { padding: 1rem; max-width: 1200px; margin: 0 auto; }
a { color: var(--counting); }
nav.filters { display: flex; flex-wrap: wrap; gap: .4rem; margin: 0 0 .8rem; align-items: center; }
nav.filters a { padding: .25rem .6rem; border: 1px solid var(--line); border-radius: 999px; text-decoration: none;
  color: var(--fg); background: var(--card); }
nav.filters a.on { border-color: var(--counting); color: var(--counting); font-weight: 600; }
nav.filters form { display: flex; gap: .4rem; flex-wrap: wrap; }
input, select, button { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--card); color: var(--fg); }
button { cursor: pointer; }
button.act { border-color: var(--counting); color: var(--counting); }
button.act.stop { border-color: var(--needs); color: var(--needs); }
.totals { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; margin: 0 0 1rem; color: var(--muted); }
.totals b { color: var(--fg); }
.sessions { display: grid; gap: .5rem; }
.session { display: grid; grid-template-columns: 11rem 1fr 9rem 7rem 14rem; gap: .25rem 1rem; align-items: center;
  padding: .6rem .8rem; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
.session .title a { font-weight: 600; color: inherit; overflow-wrap: anywhere; }
.session .id, .muted { color: var(--muted); font-size: .82rem; overflow-wrap: anywhere; }
.state { display: inline-block; padding: .1rem .5rem; border-radius: 999px; color: #fff; font-size: .85rem;
  font-weight: 600; white-space: nowrap; }
.state.counting { background: var(--counting); } .state.parked { background: var(--parked); }
.state.checking { background: var(--checking); } .state.stopped { background: var(--stopped); }
.state.needs { background: var(--needs); } .state.done { background: var(--done); }
.state.working { background: var(--working); }
.empty { padding: 2rem; text-align: center; color: var(--muted); }
section { margin: 1.2rem 0; }
section h2 { font-size: 1rem; margin: 0 0 .5rem; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line);
  border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: anywhere; }
th { font-size: .82rem; color: var(--muted); font-weight: 600; }
pre { margin: .2rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .8rem; color: var(--muted); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin: .6rem 0; }
.flash { padding: .5rem .8rem; border-radius: 6px; background: var(--card); border: 1px solid var(--done);
  margin-bottom: .8rem; }
.flash.refused { border-color: var(--needs); }
.why { color: var(--muted); }
header nav a { margin-right: .8rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 1rem; }
.chart { margin: 0; padding: .6rem .8rem; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
.chart figcaption { font-weight: 600; margin-bottom: .4rem; }
.chart svg { width: 100%; height: 140px; display: block; }
.chart rect { fill: var(--counting); }
.chart .axis { display: flex; justify-content: space-between; font-size: .75rem; }
.hbar { display: grid; grid-template-columns: 9rem 1fr 2.5rem; gap: .5rem; align-items: center; font-size: .85rem; }
.hbar .reason { overflow-wrap: anywhere; }
.hbar meter { width: 100%; }
@media (max-width: 760px) {
  .session { grid-template-columns: 1fr auto; }
  .session > .project, .session > .numbers, .session > .last { grid-column: 1 / -1; }
  table thead { display: none; }
  table, tbody, tr, td { display: block; width: 100%; }
  tr { border-bottom: 1px solid var(--line); padding: .3rem 0; }
  td { border: 0; padding: .15rem .6rem; }
  td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .8rem; }
}
`;

export const SCRIPT = `
(() => {
  const body = document.body;
  const offset = Number(body.dataset.now) - Date.now();
  let mark = body.dataset.mark;
  const words = (s) => s < 120 ? s + "s" : s < 7200 ? Math.round(s / 60) + " min" : Math.round(s / 3600) + " h";
  function tick() {
    const now = Date.now() + offset;
    for (const el of document.querySelectorAll("[data-until]"))
      el.textContent = words(Math.max(0, Math.ceil((Number(el.dataset.until) - now) / 1000)));
  }
  let drawing = false, again = false;
  async function redraw() {
    if (drawing) { again = true; return; }
    drawing = true;
    try {
      const res = await fetch(location.href, { cache: "no-store", credentials: "same-origin" });
      if (res.ok) {
        const page = new DOMParser().parseFromString(await res.text(), "text/html");
        const main = page.querySelector("main");
        if (main) document.querySelector("main").replaceWith(main);
        body.dataset.now = page.body.dataset.now;
        tick();
      }
    } catch {}
    drawing = false;
    if (again) { again = false; redraw(); }
  }
  setInterval(tick, 250);
  tick();
  const feed = new EventSource(body.dataset.events);
  feed.addEventListener("change", (event) => {
    if (event.data === mark) return;
    mark = event.data;
    redraw();
  });
})();
`;
