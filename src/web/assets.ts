/** The settings pages' only stylesheet and script, served from /settings/assets (CSP allows 'self' only). */

export const CSS = `
:root {
  --bg: #f6f7f9; --card: #fff; --text: #1c2430; --muted: #5f6b7a; --line: #dfe3e8;
  --accent: #2355d8; --accent-text: #fff; --danger: #b42318; --ok-bg: #ecfdf3; --ok-line: #a6f4c5;
  --err-bg: #fef3f2; --err-line: #fecdca; --radius: 10px;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font-size: 16px; line-height: 1.5; }
a { color: var(--accent); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
.topbar { background: var(--card); border-bottom: 1px solid var(--line); }
.topbar-inner { max-width: 1080px; margin: 0 auto; padding: .75rem 1rem; display: flex; align-items: center; gap: 1rem; flex-wrap: wrap; }
.brand { font-weight: 700; color: var(--text); text-decoration: none; margin-right: auto; }
.brand span { color: var(--muted); font-weight: 400; }
nav.tabs { display: flex; flex-wrap: wrap; gap: .25rem; }
nav.tabs a { text-decoration: none; color: var(--muted); padding: .4rem .75rem; border-radius: 999px; }
nav.tabs a[aria-current="page"] { background: #e8eefc; color: var(--accent); font-weight: 600; }
.who { display: flex; align-items: center; gap: .5rem; color: var(--muted); font-size: .9rem; }
main { max-width: 1080px; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 0 0 .75rem; }
p.lead { color: var(--muted); margin: 0 0 1.5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: var(--radius); padding: 1.25rem; margin-bottom: 1.25rem; }
.narrow { max-width: 420px; margin: 3rem auto; }
label { display: block; font-weight: 600; margin-bottom: .35rem; font-size: .95rem; }
input[type=text], input[type=password], input[type=number], input[type=file], select {
  width: 100%; padding: .6rem .7rem; border: 1px solid var(--line); border-radius: 8px; font: inherit; background: #fff;
}
input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid #9db5f2; outline-offset: 1px; }
.field { margin-bottom: 1rem; }
.row { display: flex; gap: .75rem; align-items: flex-end; flex-wrap: wrap; }
.row .field { flex: 1 1 220px; margin-bottom: 0; }
.form-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: 1rem; align-items: end; }
.form-grid .field { margin-bottom: 0; min-width: 0; }
.form-grid .wide, .form-grid .actions { grid-column: 1 / -1; }
fieldset { border: 0; margin: 0; padding: 0; min-width: 0; }
legend { font-weight: 600; margin-bottom: .35rem; font-size: .95rem; padding: 0; }
fieldset.choices { display: flex; flex-wrap: wrap; gap: .4rem .5rem; }
fieldset.choices legend { width: 100%; }
fieldset.choices label { display: inline-flex; align-items: center; gap: .35rem; font-weight: 400; margin: 0; padding: .3rem .6rem; border: 1px solid var(--line); border-radius: 999px; background: #fff; cursor: pointer; }
fieldset.choices label:has(input:checked) { border-color: #c6d4f7; background: #e8eefc; }
button, .button {
  display: inline-block; font: inherit; font-weight: 600; padding: .6rem 1rem; border-radius: 8px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-text); cursor: pointer; text-decoration: none; white-space: nowrap;
}
button.secondary, .button.secondary { background: #fff; color: var(--text); border-color: var(--line); }
button.small, .button.small { padding: .25rem .6rem; font-size: .85rem; }
button.danger, .button.danger { background: #fff; color: var(--danger); border-color: var(--err-line); }
.state { display: inline-block; padding: .1rem .5rem; border-radius: 999px; font-size: .8rem; font-weight: 600; background: #eef1f5; color: var(--muted); }
.state.COMPLETED { background: var(--ok-bg); color: #067647; }
.state.EXCEPTION { background: var(--err-bg); color: var(--danger); }
.state.RUNNING { background: #e8eefc; color: var(--accent); }
.state.active { background: var(--ok-bg); color: #067647; }
.state.expired { background: #fef0c7; color: #93370d; }
.balance { display: flex; gap: 2rem; flex-wrap: wrap; }
.balance div { display: flex; flex-direction: column; }
.balance strong { font-size: 1.6rem; font-variant-numeric: tabular-nums; }
.filters { display: flex; gap: .5rem; flex-wrap: wrap; margin-bottom: 1rem; }
.filters a { text-decoration: none; padding: .25rem .7rem; border-radius: 999px; border: 1px solid var(--line); color: var(--muted); font-size: .9rem; }
.filters a[aria-current="page"] { background: #e8eefc; color: var(--accent); border-color: #c6d4f7; }
.amount-pos { color: #067647; }
form.inline { display: inline; margin: 0; }
.notice { border-radius: 8px; padding: .75rem 1rem; margin-bottom: 1.25rem; border: 1px solid; overflow-wrap: anywhere; }
.notice.ok { background: var(--ok-bg); border-color: var(--ok-line); }
.notice.error { background: var(--err-bg); border-color: var(--err-line); }
.secret { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin-top: .5rem; }
.secret code { background: #fff; border: 1px dashed var(--line); padding: .45rem .6rem; border-radius: 6px; overflow-wrap: anywhere; flex: 1 1 240px; }
.muted { color: var(--muted); }
.hint { color: var(--muted); font-size: .875rem; margin-top: .35rem; }
table { width: 100%; border-collapse: collapse; font-size: .95rem; }
th, td { text-align: left; padding: .6rem .5rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { color: var(--muted); font-weight: 600; font-size: .85rem; }
tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
time, .hint code { white-space: nowrap; }
.uid { display: inline-flex; gap: .4rem; align-items: center; }
.empty { color: var(--muted); text-align: center; padding: 1.5rem 0; }
pre.json { margin: 0; padding: .75rem; background: #f4f6f9; border: 1px solid var(--line); border-radius: 8px; overflow: auto; max-height: 32rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; white-space: pre-wrap; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); font-weight: 600; }
dl.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.pager { display: flex; justify-content: space-between; margin-top: 1rem; }
@media (max-width: 640px) {
  main { padding: 1rem .75rem 2rem; }
  .narrow { margin: 1.5rem auto; }
  .topbar-inner { gap: .5rem; }
  table.stack thead { display: none; }
  table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.stack tr:last-child { border-bottom: 0; }
  table.stack td { display: flex; justify-content: space-between; gap: 1rem; border: 0; padding: .25rem 0; text-align: right; overflow-wrap: anywhere; }
  table.stack td::before { content: attr(data-label); color: var(--muted); font-weight: 600; font-size: .85rem; text-align: left; flex: none; }
  table.stack td.num { text-align: right; }
}
`;

export const JS = `
document.addEventListener('click', function (event) {
  var button = event.target.closest && event.target.closest('[data-copy]');
  if (!button) return;
  var text = button.getAttribute('data-copy');
  var done = function (label) {
    var original = button.getAttribute('data-label') || button.textContent;
    button.setAttribute('data-label', original);
    button.textContent = label;
    setTimeout(function () { button.textContent = original; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(function () { done('Copied'); }, function () { done('Copy failed'); });
  } else {
    var area = document.createElement('textarea');
    area.value = text; area.setAttribute('readonly', ''); area.style.position = 'fixed'; area.style.opacity = '0';
    document.body.appendChild(area); area.select();
    try { done(document.execCommand('copy') ? 'Copied' : 'Copy failed'); } catch (e) { done('Copy failed'); }
    document.body.removeChild(area);
  }
});
`;
