// skitter dashboard: polls /api/overview once a second and renders it.
//
// Safety rule: every string from the crawl (URLs, reasons, slot names, even project
// names) enters the page as a text node or through a DOM property; nothing here ever
// assigns innerHTML, and links are made only for http(s) URLs. The server's CSP
// (script-src 'self') is the second fence.
"use strict";

(() => {
  const POLL_MS = 1000;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const CSRF = document.querySelector('meta[name="skitter-csrf"]').content;

  const state = {
    selected: null, // the project whose panels are shown
    editing: new Set(), // projects whose rate editor is open (never re-rendered)
    rows: new Map(), // project name -> {tr, cells...}
    failures: 0, // consecutive failed polls (for back-off)
    polling: false,
    again: false,
    timer: null,
  };

  // -- DOM helpers ---------------------------------------------------------------------
  const $ = (selector) => document.querySelector(selector);

  /** Make an element; string children become text nodes (Node.append does that). */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined) continue;
      if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key in node) node[key] = value;
      else node.setAttribute(key, String(value));
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function link(url) {
    let web = false;
    try {
      const parsed = new URL(url);
      web = parsed.protocol === "http:" || parsed.protocol === "https:";
    } catch (_) {
      web = false;
    }
    if (!web) return document.createTextNode(String(url));
    return el("a", { href: url, target: "_blank", rel: "noopener noreferrer", title: url }, url);
  }

  function td(cls, ...children) {
    return el("td", { class: cls || null }, ...children);
  }

  // -- formatting ------------------------------------------------------------------------
  function num(value) {
    if (value === null || value === undefined) return "–";
    if (typeof value !== "number") return String(value);
    return Number.isInteger(value) ? String(value) : String(+value.toFixed(2));
  }

  function duration(seconds) {
    if (seconds < 10) return `${seconds.toFixed(1)}s`;
    if (seconds < 60) return `${Math.round(seconds)}s`;
    if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${Math.round(seconds % 60)}s`;
    return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
  }

  function ago(at, now) {
    return `${duration(Math.max(0, now - at))} ago`;
  }

  function rateText(rate, burst) {
    return rate === null ? "unlimited" : `${num(rate)}/s · burst ${num(burst)}`;
  }

  function counts(pair) {
    return [el("span", { class: "ok", title: "successes" }, num(pair.success)),
      el("span", { class: "sep" }, "/"),
      el("span", { class: "bad", title: "failures" }, num(pair.failure))];
  }

  function statusClass(status) {
    return /^[a-z]+$/.test(status) ? `status status-${status}` : "status";
  }

  // -- the API -----------------------------------------------------------------------------
  async function api(path, body) {
    const init = { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.headers["X-Skitter-CSRF"] = CSRF;
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let data = null;
    try {
      data = await response.json();
    } catch (_) {
      data = null;
    }
    if (response.status === 401) window.location.assign("/login");
    if (!response.ok) throw new Error(data && data.error ? data.error : `HTTP ${response.status}`);
    return data;
  }

  const projectPath = (name, action) => `/api/projects/${encodeURIComponent(name)}/${action}`;

  // -- polling -----------------------------------------------------------------------------
  async function poll() {
    if (state.polling) {
      state.again = true;
      return;
    }
    state.polling = true;
    clearTimeout(state.timer);
    try {
      const query = state.selected ? `?project=${encodeURIComponent(state.selected)}` : "";
      const data = await api(`/api/overview${query}`);
      state.failures = 0;
      setConnection("live", "updated every second");
      render(data);
    } catch (error) {
      state.failures += 1;
      setConnection("offline", error.message);
    } finally {
      state.polling = false;
      // Back off while the server is unreachable; poll slowly while the tab is hidden.
      const idle = document.hidden ? 5 * POLL_MS : POLL_MS;
      const delay = state.again ? 0 : Math.min(15000, idle * 2 ** state.failures);
      state.again = false;
      state.timer = setTimeout(poll, delay);
    }
  }

  function setConnection(mode, title) {
    const node = $("#connection");
    node.dataset.state = mode;
    node.textContent = mode;
    node.title = title;
  }

  let bannerTimer = null;
  function showBanner(message) {
    const banner = $("#banner");
    banner.textContent = message;
    banner.hidden = false;
    clearTimeout(bannerTimer);
    bannerTimer = setTimeout(() => { banner.hidden = true; }, 8000);
  }

  // -- rendering ---------------------------------------------------------------------------
  function render(data) {
    $("#clock").textContent = `updated ${new Date(data.now * 1000).toLocaleTimeString()}`;
    renderProjects(data.projects);
    if (data.detail) renderDetail(data.detail, data.now);
  }

  function renderProjects(projects) {
    if (!projects.some((p) => p.name === state.selected)) {
      state.selected = projects.length ? projects[0].name : null;
    }
    const tbody = $("#projects").tBodies[0];
    const seen = new Set();
    let previous = null;
    for (const project of projects) {
      let row = state.rows.get(project.name);
      if (!row) {
        row = makeProjectRow(project.name);
        state.rows.set(project.name, row);
      }
      updateProjectRow(row, project);
      const wanted = previous ? previous.tr.nextSibling : tbody.firstChild;
      if (wanted !== row.tr) tbody.insertBefore(row.tr, wanted);
      previous = row;
      seen.add(project.name);
    }
    for (const [name, row] of state.rows) {
      if (!seen.has(name)) {
        row.tr.remove();
        state.rows.delete(name);
      }
    }
  }

  function makeProjectRow(name) {
    const row = { name, project: null };
    row.status = el("span");
    row.workers = el("span", { class: "workers muted" });
    row.rate = td("rate-cell");
    row.toggle = el("button", { type: "button", class: "toggle", onclick: () => toggle(row) });
    row.cells = {};
    for (const key of ["waiting", "delayed", "leased", "in_flight", "done", "c5m", "c1h", "call", "items", "unchanged"]) {
      row.cells[key] = td(`num ${key}`);
    }
    row.chart = td("chart");
    const c = row.cells;
    row.tr = el("tr", { dataset: { project: name } },
      td("name", el("strong", {}, name), row.workers), td(null, row.status), row.rate,
      c.waiting, c.delayed, c.leased, c.in_flight, c.done, c.c5m, c.c1h, c.call, c.items,
      c.unchanged, row.chart,
      td(null, row.toggle));
    row.tr.addEventListener("click", (event) => {
      if (event.target.closest("button, input, form, a")) return;
      state.selected = name;
      poll();
    });
    return row;
  }

  function updateProjectRow(row, p) {
    row.project = p;
    row.tr.classList.toggle("selected", p.name === state.selected);
    row.status.className = statusClass(p.status);
    row.status.textContent = p.status;
    row.status.title = p.finish_error ? `failed: ${p.finish_error}`
      : p.finish_reason ? `finished: ${p.finish_reason}` : "";
    if (typeof p.workers === "number") { // a job of a distributed crawl (skitter dashboard --redis)
      row.workers.textContent = ` ${p.workers} worker${p.workers === 1 ? "" : "s"}`;
      const errors = Array.isArray(p.control_errors) ? p.control_errors : [];
      row.status.title = errors.length ? `workers refused: ${errors.join("; ")}` : row.status.title;
    }
    if (!state.editing.has(p.name)) {
      const button = el("button", {
        type: "button", class: "rate", title: "click to change rate and burst",
        onclick: () => startEdit(row),
      }, rateText(p.rate, p.burst));
      row.rate.replaceChildren(button);
    }
    const c = row.cells;
    for (const key of ["waiting", "delayed", "leased", "in_flight", "done"]) {
      c[key].textContent = num(p.tasks[key]);
    }
    c.c5m.replaceChildren(...counts(p.counts["5m"]));
    c.c1h.replaceChildren(...counts(p.counts["1h"]));
    c.call.replaceChildren(...counts(p.counts.all));
    c.items.textContent = num(p.items);
    c.unchanged.textContent = num(p.unchanged || 0);
    row.chart.replaceChildren(sparkline(p.pages_per_second),
      el("span", { class: "speed" }, `${num(p.speed)}/s`));
    const live = ["running", "paused", "checking", "idle"].includes(p.status);
    row.toggle.textContent = p.status === "paused" ? "Resume" : "Pause";
    row.toggle.disabled = !live;
  }

  async function toggle(row) {
    const action = row.project && row.project.status === "paused" ? "resume" : "pause";
    row.toggle.disabled = true;
    try {
      await api(projectPath(row.name, action), {});
    } catch (error) {
      showBanner(`${action} ${row.name}: ${error.message}`);
    }
    poll();
  }

  function startEdit(row) {
    const p = row.project;
    state.editing.add(row.name);
    const rate = el("input", { name: "rate", inputMode: "decimal", value: p.rate === null ? "" : String(p.rate), placeholder: "unlimited" });
    const burst = el("input", { name: "burst", inputMode: "decimal", value: p.burst === null ? "" : String(p.burst), placeholder: "10 × rate" });
    rate.setAttribute("aria-label", "rate (tasks per second)");
    burst.setAttribute("aria-label", "burst");
    const error = el("span", { class: "error", role: "alert" });
    const finish = () => {
      state.editing.delete(row.name);
      updateProjectRow(row, row.project);
    };
    const form = el("form", { class: "rate-editor" }, rate, "/s burst", burst,
      el("button", { type: "submit" }, "Save"),
      el("button", { type: "button", onclick: finish }, "Cancel"), error);
    form.addEventListener("keydown", (event) => { if (event.key === "Escape") finish(); });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const parse = (input, what) => {
        const text = input.value.trim();
        if (text === "") return null;
        const value = Number(text);
        if (!Number.isFinite(value)) throw new Error(`${what} must be a number (empty: ${input.placeholder})`);
        return value;
      };
      try {
        const body = { rate: parse(rate, "rate"), burst: parse(burst, "burst") };
        row.project = await api(projectPath(row.name, "rate"), body);
        finish();
        poll();
      } catch (failure) {
        error.textContent = failure.message;
      }
    });
    row.rate.replaceChildren(form);
    rate.focus();
    rate.select();
  }

  function sparkline(series) {
    const width = 120;
    const height = 22;
    const svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("class", "spark");
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const values = series.length ? series : [0];
    const top = Math.max(...values, 0.1);
    const step = values.length > 1 ? width / (values.length - 1) : width;
    const points = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 1 - (v / top) * (height - 3)).toFixed(1)}`);
    const area = document.createElementNS(SVG_NS, "polygon");
    area.setAttribute("points", `0,${height} ${points.join(" ")} ${width},${height}`);
    const line = document.createElementNS(SVG_NS, "polyline");
    line.setAttribute("points", points.join(" "));
    const title = document.createElementNS(SVG_NS, "title");
    title.textContent = `pages/s per 10 s, last ${Math.round(values.length / 6)} min; peak ${num(top)}`;
    svg.append(title, area, line);
    return svg;
  }

  // -- the panels of the selected project --------------------------------------------------
  /**
   * Rebuild a table body only when its rows changed (so a button is never replaced
   * under the pointer), then let each row refresh its time-dependent cells.
   */
  function fillTable(table, rows, signature, makeRow, emptyText, now) {
    const tbody = table.tBodies[0];
    const sig = JSON.stringify(rows.map(signature));
    if (tbody.dataset.sig !== sig) {
      tbody.dataset.sig = sig;
      const columns = table.tHead.rows[0].cells.length || 1;
      const made = rows.map(makeRow);
      tbody.replaceChildren(...(made.length ? made : [el("tr", {}, el("td", { class: "empty", colSpan: columns }, emptyText))]));
    }
    for (const tr of tbody.rows) if (tr.tick) tr.tick(now);
  }

  function renderDetail(detail, now) {
    $("#detail-title").textContent = `Project ${detail.name}`;
    const listed = detail.active.length;
    $("#active-count").textContent = listed < detail.in_flight
      ? `(${detail.in_flight}, the oldest ${listed} listed)` : `(${detail.in_flight})`;
    fillTable($("#active"), detail.active, (t) => [t.taskid, t.attempt], (t) => {
      const elapsed = td("num");
      const tr = el("tr", {}, td("url", link(t.url)), td(null, t.slot), td("num", num(t.attempt)), elapsed);
      tr.tick = (current) => { elapsed.textContent = duration(Math.max(0, current - t.started)); };
      return tr;
    }, "nothing in flight", now);

    fillTable($("#recent"), detail.recent, (o) => [o.taskid, o.at], (o) => {
      const when = td("muted");
      const tr = el("tr", {}, when, td("num", num(o.status)), td("url", link(o.url)), td("num", num(o.items)));
      tr.tick = (current) => { when.textContent = ago(o.at, current); };
      return tr;
    }, "no results yet", now);

    fillTable($("#failures"), detail.failures, (o) => [o.taskid, o.at], (o) => {
      const when = td("muted");
      const tr = el("tr", {}, when, td("reason", o.reason), td("url", link(o.url)));
      tr.tick = (current) => { when.textContent = ago(o.at, current); };
      return tr;
    }, "no failures", now);

    $("#failed-count").textContent = `(${detail.failed_tasks.length})`;
    fillTable($("#failed"), detail.failed_tasks, (t) => [t.taskid, t.lastcrawltime, t.reason], (t) => {
      const when = td("muted");
      const button = el("button", {
        type: "button", class: "retry",
        title: `queue again the failed tasks of ${t.domain || "this URL"} whose reason contains this one`,
        onclick: () => retry(detail.name, { domain: t.domain || null, reason: t.reason || null }),
      }, "Retry");
      const tr = el("tr", { dataset: { taskid: t.taskid } }, when, td("url", link(t.url)),
        td("reason", el("span", { title: t.reason }, t.reason)), td("num", num(t.retried)), td(null, button));
      tr.tick = (current) => { when.textContent = ago(t.lastcrawltime, current); };
      return tr;
    }, "no failed tasks", now);

    const report = detail.report;
    $("#monitors-status").textContent = report ? `(${report.status}${report.final ? "" : ", so far"})` : "";
    const reportLink = $("#report-link");
    reportLink.hidden = !report;
    reportLink.href = `/projects/${encodeURIComponent(detail.name)}/report`;
    fillTable($("#monitors"), detail.monitors || [], (m) => [m.name, m.status, m.message], (m) =>
      el("tr", {}, td(null, m.name), td(null, m.level), td(null, m.status), td("reason", m.message)),
    "no monitors (MONITOR_* settings)", now);

    renderGrid("slots", "slot", detail.slots, "no slots yet", now);
    renderGrid("proxies", "proxy", detail.proxies || [], "no proxy pool (PROXY_LIST)", now);
  }

  // A table whose columns are the rows' keys, ``first`` first (slots, proxies).
  function renderGrid(id, first, rows, empty, now) {
    $(`#${id}-count`).textContent = `(${rows.length})`;
    const table = $(`#${id}`);
    const keys = [first];
    for (const row of rows) for (const key of Object.keys(row)) if (!keys.includes(key)) keys.push(key);
    const head = table.tHead.rows[0];
    if (head.dataset.keys !== keys.join("\n")) {
      head.dataset.keys = keys.join("\n");
      head.replaceChildren(...keys.map((key) => el("th", { class: key === first ? null : "num" }, key.replace(/_/g, " "))));
    }
    fillTable(table, rows, (s) => keys.map((k) => s[k]), (s) => el("tr", {},
      ...keys.map((key) => td(key === first ? null : "num", num(s[key])))), empty, now);
  }

  async function retry(project, filters, action = "retry") {
    const message = $("#retry-message");
    try {
      const result = await api(projectPath(project, action), filters);
      const count = action === "retry" ? result.retried : result.requeued;
      const what = action === "retry" ? "" : " bad";
      message.textContent = `requeued ${count}${what} task${count === 1 ? "" : "s"}`;
    } catch (error) {
      message.textContent = "";
      showBanner(`${action}: ${error.message}`);
    }
    poll();
  }

  function retryFilters() {
    const form = $("#retry-form");
    return {
      domain: form.elements.domain.value.trim() || null,
      reason: form.elements.reason.value.trim() || null,
    };
  }

  $("#retry-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!state.selected) return;
    retry(state.selected, retryFilters());
  });

  $("#requeue-bad").addEventListener("click", () => {
    if (!state.selected) return;
    retry(state.selected, retryFilters(), "requeue-bad");
  });

  document.addEventListener("visibilitychange", () => { if (!document.hidden) poll(); });
  poll();
})();
