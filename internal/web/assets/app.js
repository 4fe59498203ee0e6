// The nudge Inbox page. Every string shown comes from the API and is put
// into the page as text (textContent), never as markup.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  let status = null;
  let entries = [];

  // el makes an element with a class and text.
  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  }

  function clock(iso) {
    const t = new Date(iso);
    return isNaN(t) ? '' : t.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  }

  function ago(iso) {
    const s = Math.round((Date.now() - new Date(iso)) / 1000);
    if (!isFinite(s)) return '';
    if (s < 45) return 'just now';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    if (s < 86400) return Math.round(s / 3600) + ' h ago';
    return Math.round(s / 86400) + ' d ago';
  }

  function until(iso) {
    const s = Math.max(0, Math.round((new Date(iso) - Date.now()) / 1000));
    if (s < 90) return s + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return Math.round(s / 3600) + ' h';
  }

  // stateWords is the session's state in the daemon's words, with the live
  // countdown of a retry and a usage limit's reset in local time
  // (docs/behaviour.md §6).
  function stateWords(s) {
    if (s.state === 'retrying' && s.retry_at) return 'retrying in ' + until(s.retry_at);
    if (s.state === 'usage_limit' && s.reset_at) return 'usage limit until ' + new Date(s.reset_at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    // "waiting: you have unsent text in the prompt", "waiting for Anthropic"
    if ((s.state === 'waiting_you' || s.state === 'waiting_provider') && s.note) return s.note;
    return s.state_words;
  }

  function shortID(id) {
    return id && id.length > 12 ? id.slice(0, 8) + '…' : id || '';
  }

  function project(p) {
    if (!p) return '';
    const parts = p.split(/[\\/]/).filter(Boolean);
    return parts.length ? parts[parts.length - 1] : p;
  }

  function renderOverall() {
    const pill = $('overall');
    const unread = entries.filter((e) => !e.read).length;
    // The daemon judges the overall look, unread entries included, as the
    // menu-bar icon does.
    if (status) {
      const paused = status.settings && status.settings.paused;
      pill.textContent = status.overall_words + (paused ? ' (paused)' : '');
      pill.className = 'pill ' + status.overall;
    }
    $('unread-count').textContent = unread ? '· ' + unread + ' unread' : '';
    document.title = unread ? '(' + unread + ') nudge Inbox' : 'nudge Inbox';
  }

  // openable makes li open the timeline of session on a click or Enter,
  // except on its own buttons.
  function openable(li, session) {
    li.tabIndex = 0;
    li.classList.add('openable');
    li.addEventListener('click', (ev) => {
      if (!ev.target.closest('button')) showTimeline(session);
    });
    li.addEventListener('keydown', (ev) => {
      if ((ev.key === 'Enter' || ev.key === ' ') && ev.target === li) {
        ev.preventDefault();
        showTimeline(session);
      }
    });
  }

  function renderStatus() {
    const set = status && status.settings;
    for (const [id, key] of [['toggle-retry', 'retry_enabled'], ['toggle-continue', 'continue_after_usage_limit']]) {
      const box = $(id);
      box.disabled = !set;
      box.checked = !!(set && set[key]);
    }
    const pause = $('pause');
    pause.disabled = !set;
    pause.textContent = set && set.paused ? 'Resume' : 'Pause';
    pause.classList.toggle('paused', !!(set && set.paused));

    const list = $('sessions');
    const sessions = (status && status.sessions) || [];
    // The list is drawn anew each second; a focused session keeps the focus.
    const focused = list.contains(document.activeElement) ? document.activeElement.dataset.session : '';
    list.replaceChildren(...sessions.map((s) => {
      const li = el('li');
      li.dataset.session = s.session;
      li.append(el('span', 'agent', s.agent));
      const where = el('span', 'where', project(s.project) || '(no project)');
      where.title = s.project || '';
      const sid = el('span', 'sid', shortID(s.session));
      sid.title = s.session;
      where.append(sid);
      li.append(where);
      const st = el('span', 'state ' + s.state, stateWords(s));
      if (s.note) st.title = s.note;
      li.append(st);
      if (s.session === openSession) li.classList.add('open');
      openable(li, s.session);
      return li;
    }));
    if (focused) {
      const li = list.querySelector('li[data-session="' + CSS.escape(focused) + '"]');
      if (li) li.focus();
    }
    $('no-sessions').hidden = sessions.length > 0;
    // The providers' outages while they last (docs/behaviour.md §9).
    const outs = (status && status.outages) || [];
    $('outages').hidden = outs.length === 0;
    $('outage-lines').replaceChildren(...outs.map((o) => el('li', 'outage', o.title + ' failing since ' +
      new Date(o.since).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) + ' · ' +
      o.waiting + (o.waiting === 1 ? ' session' : ' sessions') + ' waiting')));
    $('continue-waiting').disabled = !outs.some((o) => o.waiting > 0);
    renderOverall();
  }

  // renderEntries draws the entries, newest first; an outage's own entry
  // holds its sessions' entries under it (docs/behaviour.md §9).
  function renderEntries() {
    const list = $('entries');
    const heads = new Set(entries.filter((e) => e.outage && !e.session).map((e) => e.outage));
    const top = entries.filter((e) => !(e.outage && e.session && heads.has(e.outage)));
    list.replaceChildren(...top.map((e) => {
      const li = entryItem(e);
      if (heads.has(e.outage) && !e.session) {
        li.classList.add('outage-entry');
        const under = el('ol', 'under');
        under.append(...entries.filter((m) => m.outage === e.outage && m.session).map(entryItem));
        if (under.children.length) li.append(under);
      }
      return li;
    }));
    $('no-entries').hidden = entries.length > 0;
    $('read-all').disabled = !entries.some((e) => !e.read);
    $('clear').disabled = entries.length === 0;
    renderOverall();
  }

  // entryItem is one entry as the list shows it.
  function entryItem(e) {
    const li = el('li', 'entry' + (e.read ? '' : ' unread'));
    li.dataset.id = String(e.id);
    li.dataset.session = e.session;
    const meta = el('div', 'meta');
    const when = el('time', 'when', ago(e.time) + ' · ' + clock(e.time));
    when.dateTime = e.time;
    meta.append(when, el('span', 'agent', e.agent));
    const proj = el('span', 'project', project(e.project));
    proj.title = e.project || '';
    meta.append(proj);
    const sid = el('span', 'sid', shortID(e.session));
    sid.title = e.session;
    meta.append(sid);
    li.append(meta, el('p', 'what', e.what));
    if (e.error_text) li.append(el('pre', 'error-text', e.error_text));
    const foot = el('div', 'foot');
    const n = e.attempts || 0;
    let tried = n === 0 ? 'no continuation tried' : n === 1 ? '1 continuation tried' : n + ' continuations tried';
    if (e.class) tried += ' · ' + e.class.replace(/_/g, ' ') + (e.code ? ' ' + e.code : '');
    if (e.provider) tried += ' · on ' + e.provider + (e.model ? ', model ' + e.model : '');
    foot.append(el('span', 'attempts', tried));
    if (!e.read) {
      const b = el('button', 'quiet mark-read', 'Mark read');
      b.type = 'button';
      b.addEventListener('click', () => post('/api/entries/' + encodeURIComponent(e.id) + '/read'));
      foot.append(b);
    }
    li.append(foot);
    if (!e.session) return li; // an outage's own entry has no timeline
    if (e.session === openSession) li.classList.add('open');
    openable(li, e.session);
    return li;
  }

  // The timeline of one session (what `nudge explain` prints): its events,
  // nudge's decisions and the continuations typed, oldest first, in words;
  // the agent's own text apart, as text. It follows the live updates.
  let openSession = '';
  let timelineWanted = null;

  const lineLabel = { event: 'in the session', decision: 'nudge decided', attempt: 'continuation' };

  function when(iso) {
    const t = new Date(iso);
    if (isNaN(t)) return '';
    const today = new Date().toDateString() === t.toDateString();
    return today ? t.toLocaleTimeString() : t.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  }

  function showTimeline(session) {
    openSession = session;
    $('timeline').hidden = false;
    $('timeline').dataset.session = session;
    document.body.classList.add('with-timeline');
    for (const li of document.querySelectorAll('li.openable')) li.classList.toggle('open', li.dataset.session === session);
    loadTimeline();
  }

  function closeTimeline() {
    openSession = '';
    $('timeline').hidden = true;
    delete $('timeline').dataset.session;
    delete $('timeline').dataset.loaded;
    document.body.classList.remove('with-timeline');
    for (const li of document.querySelectorAll('li.openable.open')) li.classList.remove('open');
  }

  // timelineSoon reloads the open timeline once the updates settle.
  function timelineSoon() {
    if (!openSession || timelineWanted) return;
    timelineWanted = setTimeout(() => { timelineWanted = null; loadTimeline(); }, 150);
  }

  async function loadTimeline() {
    const session = openSession;
    if (!session) return;
    try {
      const r = await fetch('/api/sessions/' + encodeURIComponent(session) + '/timeline', { headers: auth(), credentials: 'omit', cache: 'no-store' });
      if (r.status === 401) {
        signedOut(forgotten);
        return;
      }
      if (session !== openSession) return;
      if (!r.ok) {
        $('timeline-who').textContent = 'No timeline: ' + (await r.text()).trim();
        $('timeline-lines').replaceChildren();
        return;
      }
      renderTimeline(await r.json());
    } catch (err) {
      showConnection('Could not reach nudge: ' + err, true);
    }
  }

  function renderTimeline(tl) {
    const who = $('timeline-who');
    who.replaceChildren(el('span', 'agent', tl.agent), el('span', 'where', project(tl.project) || '(no project)'));
    const sid = el('span', 'sid', shortID(tl.session));
    sid.title = tl.session;
    who.append(sid, el('span', 'state ' + tl.state, 'now ' + tl.state_words));
    const live = ((status && status.sessions) || []).find((s) => s.session === tl.session);
    const todo = $('timeline-todo');
    const told = live ? live.told : '';
    todo.textContent = told || '';
    todo.hidden = !told;
    const story = tl.story || [];
    $('timeline-lines').replaceChildren(...story.map((l) => {
      const li = el('li', 'line ' + l.kind + (l.tone ? ' ' + l.tone : ''));
      li.dataset.kind = l.kind;
      if (l.tone) li.dataset.tone = l.tone;
      const at = el('time', 'at', when(l.at));
      at.dateTime = l.at;
      li.append(at, el('span', 'label', lineLabel[l.kind] || l.kind), el('p', 'text', l.text));
      if (l.quote) li.append(el('pre', 'quote', l.quote));
      return li;
    }));
    $('timeline-empty').hidden = story.length > 0;
    $('timeline').dataset.loaded = '1';
  }

  $('timeline-close').addEventListener('click', closeTimeline);
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && openSession) closeTimeline();
  });

  function showConnection(text, lost) {
    const c = $('connection');
    c.textContent = text;
    c.classList.toggle('lost', lost);
  }

  // Signing in (docs/security.md). A sign-in link carries a one-time
  // launch token in its fragment; the page trades it for a token of its
  // own, kept in this tab's sessionStorage and sent as a header. Never a
  // cookie: a browser sends cookies to every port of 127.0.0.1. The event
  // stream, which cannot send headers, gets a one-time ticket each time it
  // connects.
  const tokenKey = 'nudge.page';
  let token = '';

  function auth() {
    return { Authorization: 'Bearer ' + token };
  }

  // signIn returns the page's token, or '' with the reason it has none.
  async function signIn() {
    const m = /^#launch=([0-9a-f]{64})$/.exec(location.hash);
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    if (m) {
      try {
        const r = await fetch('/api/page', { method: 'POST', headers: { Authorization: 'Launch ' + m[1] }, credentials: 'omit', cache: 'no-store' });
        if (r.ok) {
          sessionStorage.setItem(tokenKey, (await r.json()).token);
        } else if (!sessionStorage.getItem(tokenKey)) {
          return ['', 'This sign-in link was already used or has expired.'];
        }
      } catch (err) {
        return ['', 'Could not reach nudge: ' + err];
      }
    }
    const stored = sessionStorage.getItem(tokenKey) || '';
    return [stored, stored ? '' : 'This page is not signed in.'];
  }

  function signedOut(why) {
    sessionStorage.removeItem(tokenKey);
    token = '';
    document.body.dataset.live = '';
    showConnection('signed out', true);
    const p = $('signed-out');
    p.textContent = why + ' Open the Inbox again from the menu-bar icon or with “nudge inbox --open”.';
    p.hidden = false;
  }

  const forgotten = 'nudge no longer knows this page: it was restarted, or signed this page out.';

  async function post(path, body) {
    const init = { method: 'POST', headers: auth(), credentials: 'omit', cache: 'no-store' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    try {
      const r = await fetch(path, init);
      if (r.status === 401) signedOut(forgotten);
      else if (!r.ok) showConnection('Could not save: ' + r.status + ' ' + (await r.text()).trim(), true);
    } catch (err) {
      showConnection('Could not reach nudge: ' + err, true);
    }
  }

  $('toggle-retry').addEventListener('change', (ev) => post('/api/settings', { retry_enabled: ev.target.checked }));
  $('toggle-continue').addEventListener('change', (ev) => post('/api/settings', { continue_after_usage_limit: ev.target.checked }));
  $('pause').addEventListener('click', () => post('/api/settings', { paused: !(status && status.settings && status.settings.paused) }));
  $('read-all').addEventListener('click', () => post('/api/entries/read-all'));
  $('continue-waiting').addEventListener('click', () => post('/api/continue', {}));

  // Clear asks for a second click instead of a dialog.
  let armed = null;
  const clear = $('clear');
  clear.addEventListener('click', () => {
    if (armed) {
      clearTimeout(armed);
      armed = null;
      clear.textContent = 'Clear';
      clear.classList.remove('armed');
      post('/api/entries/clear');
      return;
    }
    clear.textContent = 'Click again to clear all';
    clear.classList.add('armed');
    armed = setTimeout(() => { armed = null; clear.textContent = 'Clear'; clear.classList.remove('armed'); }, 4000);
  });

  // The picture: each provider's errors over the last 24 hours or 7 days,
  // its outages as bands (docs/behaviour.md §9). It is loaded again after
  // the live updates settle.
  let range = '24h';
  let pictureWanted = null;
  const svgNS = 'http://www.w3.org/2000/svg';

  function svg(tag, attrs, tip) {
    const n = document.createElementNS(svgNS, tag);
    for (const k in attrs) n.setAttribute(k, String(attrs[k]));
    if (tip) {
      const t = document.createElementNS(svgNS, 'title');
      t.textContent = tip;
      n.append(t);
    }
    return n;
  }

  function pictureSoon() {
    if (pictureWanted) return;
    pictureWanted = setTimeout(() => { pictureWanted = null; loadPicture(); }, 300);
  }

  async function loadPicture() {
    try {
      const r = await fetch('/api/picture?range=' + encodeURIComponent(range), { headers: auth(), credentials: 'omit', cache: 'no-store' });
      if (r.ok) renderPicture(await r.json());
    } catch (err) {
      showConnection('Could not reach nudge: ' + err, true);
    }
  }

  function renderPicture(p) {
    const box = $('picture');
    box.replaceChildren();
    const titles = [...new Set(p.providers.map((x) => x.title).concat(p.outages.map((o) => o.title)))];
    $('no-picture').hidden = titles.length > 0;
    const since = new Date(p.since).getTime();
    const span = p.buckets * p.step_seconds * 1000;
    const W = 600, H = 60, bw = W / p.buckets;
    for (const title of titles) {
      const prov = p.providers.find((x) => x.title === title);
      const counts = prov ? prov.counts : [];
      const total = counts.reduce((a, b) => a + b, 0);
      const outs = p.outages.filter((o) => o.title === title);
      const continued = outs.reduce((a, o) => a + o.continued, 0);
      const row = el('div', 'picture-row');
      row.dataset.provider = title;
      let words = title + ' · ' + total + (total === 1 ? ' error' : ' errors');
      if (outs.length) words += ' · ' + outs.length + (outs.length === 1 ? ' outage' : ' outages') + ', ' + continued + ' sessions continued after';
      row.append(el('p', 'picture-title', words));
      const g = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'chart', role: 'img', 'aria-label': words });
      for (const o of outs) {
        const x0 = Math.max(0, (new Date(o.start).getTime() - since) / span * W);
        const x1 = Math.min(W, ((o.end ? new Date(o.end).getTime() : Date.now()) - since) / span * W);
        g.append(svg('rect', { class: 'band', x: x0, y: 0, width: Math.max(2, x1 - x0), height: H },
          title + ' outage from ' + clock(o.start) + (o.end ? ' to ' + clock(o.end) : ', lasting') + ': ' + o.sessions + ' sessions'));
      }
      const most = Math.max(1, ...counts);
      counts.forEach((c, i) => {
        if (!c) return;
        const h = Math.max(2, c / most * (H - 4));
        g.append(svg('rect', { class: 'bar', x: i * bw + 1, y: H - h, width: Math.max(1, bw - 2), height: h },
          c + (c === 1 ? ' error' : ' errors') + ' from ' + clock(new Date(since + i * p.step_seconds * 1000).toISOString())));
      });
      row.append(g);
      box.append(row);
    }
  }

  for (const [id, r] of [['range-24h', '24h'], ['range-7d', '7d']]) {
    $(id).addEventListener('click', () => {
      range = r;
      $('range-24h').setAttribute('aria-pressed', String(r === '24h'));
      $('range-7d').setAttribute('aria-pressed', String(r === '7d'));
      loadPicture();
    });
  }

  let retryIn = 1000;

  // connect opens the event stream with a new ticket, and again after it drops.
  async function connect() {
    let ticket;
    try {
      const r = await fetch('/api/events/ticket', { method: 'POST', headers: auth(), credentials: 'omit', cache: 'no-store' });
      if (r.status === 401) {
        signedOut(forgotten);
        return;
      }
      if (!r.ok) throw new Error(r.status + ' ' + r.statusText);
      ticket = (await r.json()).ticket;
    } catch (err) {
      reconnectLater();
      return;
    }
    const events = new EventSource('/api/events?ticket=' + encodeURIComponent(ticket));
    events.addEventListener('open', () => {
      retryIn = 1000;
      showConnection('live', false);
    });
    events.addEventListener('error', () => {
      events.close();
      reconnectLater();
    });
    events.addEventListener('status', (ev) => {
      status = JSON.parse(ev.data);
      renderStatus();
      timelineSoon();
      pictureSoon();
      document.body.dataset.live = '1';
    });
    events.addEventListener('entries', (ev) => {
      entries = JSON.parse(ev.data) || [];
      renderEntries();
      timelineSoon();
    });
  }

  function reconnectLater() {
    showConnection('connection lost — reconnecting…', true);
    setTimeout(connect, retryIn);
    retryIn = Math.min(retryIn * 2, 30000);
  }

  signIn().then(([t, why]) => {
    token = t;
    if (token) connect();
    else signedOut(why);
  });

  // Countdowns and "N min ago" move on by themselves.
  setInterval(() => {
    if (status) renderStatus();
    for (const t of document.querySelectorAll('#entries time.when')) {
      t.textContent = ago(t.dateTime) + ' · ' + clock(t.dateTime);
    }
  }, 1000);
})();
