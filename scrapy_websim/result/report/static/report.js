/* scrapy-websim report: renders the data files of this folder (data/*.js) into the page.
 *
 * Safety: every string that comes from a crawled page (URL, title, error, extra fields) is put in
 * the page with textContent or as an attribute value, never parsed as HTML; links are made only for
 * http(s) URLs; image sources are only this folder's thumbnail files. The page's
 * Content-Security-Policy allows scripts and styles from this folder only.
 *
 * Scale: the rows arrive in chunks (data/rows-NNN.js); the first view needs the first chunk only.
 * Lists are paged, so the page never holds more than one page of rows in its DOM.
 */
(function () {
  "use strict";

  // Row fields (see writer.py, _Builder.add)
  var ID = 0, URL_ = 1, TITLE = 2, STATUS = 3, CL = 4, RULE = 5, CS = 6, SS = 7, VS = 8, BS = 9,
      ERR = 10, HOST = 11, THUMB = 12, FINAL = 13, EXTRA = 14, REASON = 15;
  // Cluster fields
  var C_ID = 0, C_KIND = 1, C_SIZE = 2, C_HEAD = 3, C_REST = 4, C_ORIGINS = 5, C_NORIGINS = 6;
  var PAGE = { clusters: 20, alone: 100, failed: 100 };
  var DIALOG_PAGE = 48;
  var MEMBERS_IN_CARD = 5;

  var M = null;
  var rows = [];
  var hay = [];
  var loadedRows = 0;
  var allLoaded = false;
  var clustersLoaded = false;
  var pending = false;   // the list or the dialog on screen waits for data still loading
  var queue = [];        // data files to load after the first view
  var state = { q: "", kind: "", rule: "", status: "", host: "", pivot: "", tab: "clusters", page: 0 };
  var view = null;       // cached result of compute()
  var hostOk = null;     // per host index: matches the host filter
  var dialog = { ci: -1, page: 0, pending: false };

  function $(id) { return document.getElementById(id); }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      if (arguments[i]) { parent.appendChild(arguments[i]); }
    }
    return parent;
  }

  // 12345 -> "12,345" (not toLocaleString: starting Intl costs a cold page hundreds of ms)
  function fmt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  function pct(n, total) { return total ? Math.round(1000 * n / total) / 10 : 0; }

  // Only http(s) URLs become links; anything else (javascript:, data:, garbage) stays text.
  function safeHref(url) {
    if (typeof url !== "string" || !/^https?:\/\//i.test(url)) { return null; }
    try {
      var u = new URL(url);
      return (u.protocol === "http:" || u.protocol === "https:") ? u.href : null;
    } catch (e) { return null; }
  }

  function link(url, cls) {
    var href = safeHref(url);
    var a = el(href ? "a" : "span", cls, url || "(no URL)");
    if (href) {
      a.href = href;
      a.target = "_blank";
      a.rel = "noopener noreferrer nofollow";
    }
    a.title = url || "";
    return a;
  }

  function thumb(r, cls, w, h) {
    var name = r && r[THUMB];
    if (name && /^[0-9a-f]{16}\.(webp|jpg)$/.test(name)) {
      var img = el("img", cls);
      img.loading = "lazy";
      img.decoding = "async";
      img.width = w;
      img.height = h;
      img.alt = "screenshot";
      img.src = "thumbs/" + name;
      return img;
    }
    var none = el("div", cls + " nothumb", r ? (r[ERR] ? "failed" : "no screenshot") : "loading…");
    return none;
  }

  function safeClass(prefix, name) {
    return prefix + (/^[A-Za-z0-9_]+$/.test(name) ? name : "other");
  }

  function statusClass(status) { return status >= 100 && status <= 599 ? Math.floor(status / 100) + "xx" : "none"; }

  function statusBadge(status) {
    var cls = statusClass(status);
    return el("span", "badge s" + cls, status ? String(status) : "—");
  }

  function kindName(kind) { return (M.kind_names && M.kind_names[kind]) || kind; }

  function kindBadge(kind) { return el("span", "badge " + safeClass("k-", kind), kind === "content" ? "content" : kind); }

  function ruleName(rule) { return rule === "" ? "no cluster" : rule; }

  // ---- data arrival -------------------------------------------------------------------------

  function receive(p) {
    if (!p || typeof p !== "object") { return; }
    if (p.type === "meta") { M = p; M.hosts = []; return; }
    if (p.type === "clusters") {
      M.clusters = p.clusters;
      M.hosts = p.hosts;
      clustersLoaded = true;
      return;
    }
    if (p.type === "rows") {
      for (var i = 0; i < p.rows.length; i++) {
        var r = p.rows[i];
        rows[p.start + i] = r;
        hay[p.start + i] = (r[URL_] + "\n" + r[TITLE] + "\n" + r[FINAL]).toLowerCase();
      }
      loadedRows += p.rows.length;
    }
  }

  // One data file after the other (each one parsed while the page stays usable in between).
  function loadNext() {
    if (!queue.length) {
      allLoaded = true;
      view = null;
      showLoading();
      render();
      document.documentElement.setAttribute("data-loaded", "1");
      return;
    }
    var s = document.createElement("script");
    s.src = queue.shift();
    s.onload = function () { setTimeout(loadNext, 0); };
    s.onerror = function () { $("loading").textContent = "A data file is missing: " + s.src; };
    document.body.appendChild(s);
  }

  function onData(p) {
    view = null;
    if (p && p.type === "clusters") { hostsReady(); }
    showLoading();
    if (pending || filtering() || state.kind !== "" || state.tab !== "clusters") {
      render();
    } else {
      renderChrome(compute());
    }
    if (dialog.ci >= 0 && dialog.pending) { renderDialog(); }
  }

  function showLoading() {
    var total = M ? M.summary.urls : 0;
    $("loading").textContent = allLoaded ? "" : "loading: " + fmt(loadedRows) + " / " + fmt(total) + " pages…";
  }

  // ---- filters --------------------------------------------------------------------------------

  function filtering() { return !!(state.q || state.rule !== "" || state.status || state.host || state.pivot); }

  // A pivot: the page's favicon hash (the whole number) or its certificate's SHA-256 (a prefix will do).
  function pivotOk(r) {
    var x = r[EXTRA];
    if (!x) { return false; }
    if (x.favicon_hash !== undefined && String(x.favicon_hash) === state.pivot) { return true; }
    return typeof x.tls_sha256 === "string" && state.pivot.length >= 8 && x.tls_sha256.indexOf(state.pivot) === 0;
  }

  function rowMatches(r, pos) {
    if (state.status && statusClass(r[STATUS]) !== state.status) { return false; }
    if (state.rule !== "" && r[RULE] !== +state.rule) { return false; }
    if (state.host && !(hostOk && hostOk[r[HOST]])) { return false; }
    if (state.pivot && !pivotOk(r)) { return false; }
    if (state.q && hay[pos].indexOf(state.q) < 0) { return false; }
    return true;
  }

  function memberPos(c, j) {
    return j < M.head ? c[C_HEAD] + j : c[C_REST] + (j - M.head);
  }

  function kindOk(c) {
    if (state.kind === "") { return true; }
    if (state.kind === "none") { return false; }
    return c[C_KIND] === +state.kind;
  }

  function compute() {
    if (view) { return view; }
    var v = { clusters: [], matches: {}, alone: [], failed: [], counts: {} };
    var filt = filtering();
    var i, j, c, r;
    for (i = 0; i < M.clusters.length; i++) {
      c = M.clusters[i];
      if (!kindOk(c)) { continue; }
      if (!filt) { v.clusters.push(i); continue; }
      var hits = [];
      for (j = 0; j < c[C_SIZE]; j++) {
        var pos = memberPos(c, j);
        r = rows[pos];
        if (r && rowMatches(r, pos)) { hits.push(pos); }
      }
      if (hits.length) { v.clusters.push(i); v.matches[i] = hits; }
    }
    var kindAll = state.kind === "" || state.kind === "none";
    for (i = 0; i < rows.length; i++) {
      r = rows[i];
      if (!r) { continue; }
      var clustered = r[CL] >= 0;
      if (r[ERR]) {
        var own = clustered ? M.clusters[r[CL]] : null;  // undefined until the cluster table is loaded
        if ((clustered ? own && kindOk(own) : kindAll) && (!filt || rowMatches(r, i))) { v.failed.push(i); }
      } else if (!clustered && kindAll && (!filt || rowMatches(r, i))) {
        v.alone.push(i);
      }
    }
    view = v;
    return v;
  }

  function readFilters() {
    state.q = $("q").value.trim().toLowerCase();
    state.kind = $("f-kind").value;
    state.rule = $("f-rule").value;
    state.status = $("f-status").value;
    state.host = $("f-host").value.trim().toLowerCase();
    state.pivot = $("f-pivot").value.trim().toLowerCase().replace(/:/g, "");
    hostsReady();
    state.page = 0;
    view = null;
    render();
  }

  function hostsReady() {
    hostOk = null;
    if (state.host) {
      hostOk = M.hosts.map(function (h) { return h.toLowerCase().indexOf(state.host) >= 0; });
    }
    var dl = $("hosts");
    if (!dl.firstChild) {
      M.hosts.slice(0, 2000).forEach(function (h) { if (h) { var o = el("option"); o.value = h; dl.appendChild(o); } });
    }
  }

  function setFilter(id, value) {
    $(id).value = value;
    readFilters();
    $("filters").scrollIntoView({ block: "start" });
  }

  // ---- summary ------------------------------------------------------------------------------

  function stat(label, value, note) {
    var d = el("div", "stat");
    add(d, el("div", "stat-v", value), el("div", "stat-l", label));
    if (note) { add(d, el("div", "stat-n", note)); }
    return d;
  }

  function chart(title, items, total, onPick) {
    // items: [label, count, cls, filterValue]
    var box = el("div", "chart");
    add(box, el("h3", null, title));
    var max = 0;
    items.forEach(function (it) { max = Math.max(max, it[1]); });
    items.forEach(function (it) {
      var row = el("div", "bar");
      var label = el("button", "bar-l", it[0]);
      label.type = "button";
      label.title = "Show only: " + it[0];
      label.addEventListener("click", function () { onPick(it[3]); });
      var track = el("div", "bar-t");
      var fill = el("div", "bar-f " + (it[2] || ""));
      fill.style.width = (max ? Math.max(0.5, 100 * it[1] / max) : 0) + "%";
      add(track, fill);
      add(row, label, track, el("span", "bar-n", fmt(it[1]) + " · " + pct(it[1], total) + "%"));
      add(box, row);
    });
    return box;
  }

  function renderSummary() {
    var s = M.summary;
    var box = $("summary");
    box.textContent = "";
    var stats = el("div", "stats");
    add(stats,
      stat("URLs", fmt(s.urls)),
      stat("clusters", fmt(s.clusters), fmt(s.content_clusters) + " by content · " + fmt(s.rule_clusters) + " by rule"),
      stat("pages kept", fmt(s.kept), "one per cluster + pages in no cluster"),
      stat("pages saved", fmt(s.saved), pct(s.saved, s.urls) + "% of the URLs need no look"),
      stat("in no cluster", fmt(s.alone)),
      stat("failed", fmt(s.failed)),
      stat("renders taken", fmt(s.took_render || 0), "pages whose document was one rendered already"),
      stat("screenshots", fmt(s.thumbnails)));
    add(box, stats);
    if (!s.thumbnails) {
      add(box, el("p", "banner",
        "No thumbnails in this report: the crawl kept none. A crawl keeps them with --report DIR, " +
        "WEBSIM_REPORT_DIR or WEBSIM_THUMBNAILS_DIR; then 'websim report RESULT -o DIR --thumbnails THUMBS'."));
    }
    var charts = el("div", "charts");
    var kinds = s.by_kind.map(function (k) {
      return [k[0] + " · " + k[1] + " (" + fmt(k[2]) + (k[2] === 1 ? " cluster)" : " clusters)"), k[3], safeClass("k-", k[0]), String(M.kinds.indexOf(k[0]))];
    });
    var inNone = s.urls - s.clustered;
    if (inNone) { kinds.push(["in no cluster", inNone, "k-none", "none"]); }
    add(charts,
      chart("Pages by cluster kind", kinds, s.urls, function (v) { setFilter("f-kind", v); }),
      chart("Pages by how they joined", s.by_rule.map(function (r) {
        return [ruleName(r[0]), r[1], "r", String(M.rules.indexOf(r[0]))];
      }), s.urls, function (v) { setFilter("f-rule", v); }),
      chart("Pages by status", s.by_status.map(function (r) {
        return [r[0] === "none" ? "no response" : r[0], r[1], "s" + r[0], r[0]];
      }), s.urls, function (v) { setFilter("f-status", v); }),
      chart("Top hosts", s.by_host.map(function (h) {
        return [h[0] || "(no host)", h[1], "h", h[0]];
      }), s.urls, function (v) { setFilter("f-host", v); }));
    // Pivots: one favicon or one certificate on many hosts groups hosts that look different.
    var pivotItem = function (p) {
      return [p[0].slice(0, 16) + (p[0].length > 16 ? "…" : "") + (p[3] ? " " + p[3] : "") + " · " + fmt(p[2]) +
              (p[2] === 1 ? " host" : " hosts"), p[1], "h", p[0]];
    };
    if (s.by_favicon && s.by_favicon.length) {
      add(charts, chart("Pages by favicon hash", s.by_favicon.map(pivotItem), s.urls,
        function (v) { setFilter("f-pivot", v); }));
    }
    if (s.by_cert && s.by_cert.length) {
      add(charts, chart("Pages by certificate (SHA-256)", s.by_cert.map(pivotItem), s.urls,
        function (v) { setFilter("f-pivot", v); }));
    }
    add(box, charts);
  }

  function renderHeader() {
    var src = $("source");
    var bits = [];
    if (M.source) { bits.push(M.source); }
    if (M.meta.generated_at) { bits.push("crawled " + M.meta.generated_at); }
    bits.push("report written " + M.written_at);
    src.textContent = bits.join(" · ");
    if (M.meta.decision) { src.title = "decision: " + M.meta.decision; }
    document.title = "scrapy-websim report" + (M.source ? " — " + M.source : "");
  }

  function option(select, value, text) {
    var o = el("option", null, text);
    o.value = value;
    select.appendChild(o);
  }

  function renderFilterOptions() {
    var kind = $("f-kind");
    M.kinds.forEach(function (k, i) { option(kind, String(i), k + " — " + kindName(k)); });
    option(kind, "none", "in no cluster");
    var rule = $("f-rule");
    M.rules.forEach(function (r, i) { option(rule, String(i), ruleName(r)); });
    var st = $("f-status");
    M.summary.by_status.forEach(function (s) { option(st, s[0], s[0] === "none" ? "no response" : s[0]); });
  }

  // ---- lists --------------------------------------------------------------------------------

  function sims(r) {
    if (!r[CS] && !r[SS] && !r[VS] && !r[BS]) {
      var none = el("span", "sims none", "not compared");
      none.title = "placed by a rule or by prediction, or in no cluster: no similarity measured";
      return none;
    }
    var d = el("span", "sims");
    [["text", CS], ["structure", SS], ["visual", VS], ["behaviour", BS]].forEach(function (p) {
      var v = r[p[1]];
      var s = el("span", "sim" + (v >= 0.9 ? " hi" : v >= 0.5 ? " mid" : ""), v.toFixed(2));
      s.title = p[0] + " similarity to the canonical";
      add(d, s);
    });
    return d;
  }

  function extras(r) {
    var x = r[EXTRA];
    if (!x) { return null; }
    var d = el("div", "extra");
    Object.keys(x).forEach(function (k) { add(d, el("span", null, k + ": " + x[k])); });
    return d;
  }

  // Why the page is in its cluster (match_reason; results of older versions have none).
  function reason(r) {
    return r[REASON] ? el("div", "reason", r[REASON]) : null;
  }

  function memberRow(r) {
    var tr = el("tr");
    var u = el("td", "u");
    add(u, link(r[URL_], "url"));
    if (r[FINAL]) { add(u, el("div", "final", "→ " + r[FINAL])); }
    var t = el("td", "t", r[TITLE] || "");
    add(t, extras(r));
    var e = r[ERR] ? el("div", "err", r[ERR]) : null;
    add(t, e);
    var st = el("td"); add(st, statusBadge(r[STATUS]));
    var sm = el("td"); add(sm, sims(r));
    add(u, reason(r));
    add(tr, u, st, t, sm, el("td", "rule", ruleName(M.rules[r[RULE]])));
    return tr;
  }

  function memberTable(list) {
    var table = el("table", "members");
    var head = el("tr");
    [["url", "URL"], ["status", "status"], ["title", "title"], ["sims", "similarity t · s · v · b"], ["rule", "joined by"]]
      .forEach(function (h) { add(head, el("th", "c-" + h[0], h[1])); });
    add(table, add(el("thead"), head));
    var body = el("tbody");
    list.forEach(function (pos) {
      var r = rows[pos];
      if (r) { add(body, memberRow(r)); }
    });
    add(table, body);
    return table;
  }

  function originsLine(c) {
    var n = c[C_NORIGINS];
    var d = el("div", "origins");
    add(d, el("span", "lbl", n === 1 ? "1 origin" : fmt(n) + " origins"));
    c[C_ORIGINS].forEach(function (o) { add(d, el("span", "origin", o)); });
    if (n > c[C_ORIGINS].length) { add(d, el("span", "more", "+" + fmt(n - c[C_ORIGINS].length) + " more")); }
    return d;
  }

  function clusterCard(ci, hits) {
    var c = M.clusters[ci];
    var kind = M.kinds[c[C_KIND]];
    var canon = rows[c[C_HEAD]];
    if (!canon) { pending = true; }
    var card = el("article", "card " + safeClass("k-", kind));
    card.setAttribute("data-cluster", c[C_ID]);
    var side = el("div", "side");
    add(side, thumb(canon, "shot", 240, 150));
    var body = el("div", "body");
    var head = el("div", "card-h");
    add(head, kindBadge(kind), el("span", "kind-name", kindName(kind)), el("span", "cid", c[C_ID]),
        el("span", "size", fmt(c[C_SIZE]) + (c[C_SIZE] === 1 ? " page" : " pages")));
    add(body, head);
    if (canon) {
      var main = el("div", "canon");
      add(main, statusBadge(canon[STATUS]), link(canon[URL_], "url big"));
      add(body, main);
      add(body, el("div", "title", canon[TITLE] || "(no title)"));
      if (canon[ERR]) { add(body, el("div", "err", canon[ERR])); }
      add(body, extras(canon));
    } else {
      add(body, el("div", "title", "loading…"));
    }
    add(body, originsLine(c));
    var others;
    if (hits) {
      others = hits.filter(function (p) { return p !== c[C_HEAD]; }).slice(0, MEMBERS_IN_CARD);
      add(body, el("div", "hits", fmt(hits.length) + " of " + fmt(c[C_SIZE]) + " pages match the filters"));
    } else {
      others = [];
      for (var j = 1; j < Math.min(c[C_SIZE], MEMBERS_IN_CARD + 1); j++) { others.push(memberPos(c, j)); }
    }
    if (others.length) { add(body, memberTable(others)); }
    var open = el("button", "open", c[C_SIZE] > 1 ? "Open cluster: all " + fmt(c[C_SIZE]) + " pages side by side" : "Open");
    open.type = "button";
    open.addEventListener("click", function () { openCluster(ci); });
    add(body, open);
    add(card, side, body);
    return card;
  }

  function rowTable(list, failed) {
    var table = el("table", "rows");
    var head = el("tr");
    var cols = failed ? [["id", "id"], ["url", "URL"], ["status", "status"], ["error", "error"], ["title", "title"]]
      : [["thumb", ""], ["id", "id"], ["url", "URL"], ["status", "status"], ["title", "title"], ["host", "host"]];
    cols.forEach(function (h) { add(head, el("th", "c-" + h[0], h[1])); });
    add(table, add(el("thead"), head));
    var body = el("tbody");
    list.forEach(function (pos) {
      var r = rows[pos];
      if (!r) { return; }
      var tr = el("tr");
      var u = el("td", "u");
      add(u, link(r[URL_], "url"));
      if (r[FINAL]) { add(u, el("div", "final", "→ " + r[FINAL])); }
      var st = el("td"); add(st, statusBadge(r[STATUS]));
      var t = el("td", "t", r[TITLE] || "");
      add(t, extras(r));
      if (failed) {
        add(tr, el("td", "id", r[ID]), u, st, el("td", "err", r[ERR]), t);
      } else {
        var th = el("td", "mini"); add(th, thumb(r, "tiny", 96, 60));
        add(tr, th, el("td", "id", r[ID]), u, st, t, el("td", "host", M.hosts[r[HOST]] || ""));
      }
      add(body, tr);
    });
    add(table, body);
    return table;
  }

  function pager(box, page, pages, go) {
    box.textContent = "";
    if (pages <= 1) { return; }
    function b(text, target, disabled) {
      var x = el("button", null, text);
      x.type = "button";
      x.disabled = disabled;
      x.addEventListener("click", function () { go(target); });
      return x;
    }
    add(box, b("« first", 0, page === 0), b("‹ previous", page - 1, page === 0),
        el("span", "pg", "page " + fmt(page + 1) + " of " + fmt(pages)),
        b("next ›", page + 1, page >= pages - 1), b("last »", pages - 1, page >= pages - 1));
  }

  // What the tabs, the note and the pager say; unfiltered counts come from the summary until all is loaded.
  function totals(v) {
    var s = M.summary;
    var exact = allLoaded || filtering() || state.kind !== "";
    return {
      clusters: exact || clustersLoaded ? v.clusters.length : s.clusters,
      alone: exact ? v.alone.length : s.alone,
      failed: exact ? v.failed.length : s.failed,
    };
  }

  function renderChrome(v) {
    var n = totals(v);
    var filt = filtering() || state.kind !== "";
    $("n-clusters").textContent = fmt(n.clusters);
    $("n-alone").textContent = fmt(n.alone);
    $("n-failed").textContent = fmt(n.failed);
    Array.prototype.forEach.call(document.querySelectorAll("#tabs button"), function (b) {
      var on = b.getAttribute("data-tab") === state.tab;
      b.className = on ? "on" : "";
      b.setAttribute("aria-selected", on ? "true" : "false");
    });
    var what = { clusters: "clusters", alone: "pages in no cluster", failed: "failed URLs" }[state.tab];
    $("matched").textContent = fmt(n[state.tab]) + " " + what + (filt ? " match the filters" : "") +
      (state.tab === "clusters" ? ", largest first" : "") + (allLoaded || !filt ? "" : " (still loading)");
    var pages = Math.max(1, Math.ceil(n[state.tab] / PAGE[state.tab]));
    // one pager above the list (it never moves while the cards below it lay out) and one below it
    ["pager-top", "pager"].forEach(function (id) {
      pager($(id), Math.min(state.page, pages - 1), pages, function (p) {
        state.page = p;
        render();
        $("tabs").scrollIntoView({ block: "start" });
      });
    });
    return pages;
  }

  // ---- changes since an earlier scan (websim diff --report) ---------------------------------

  var CHANGES_SHOWN = 500;
  var CHANGE_PAGE = 20;
  var changeState = { kind: "", page: 0 };

  function changeList(title, items, more, line) {
    var box = el("section", "changes-list");
    add(box, el("h3", null, title + " (" + fmt(items.length + (more || 0)) + ")"));
    if (!items.length) { add(box, el("p", "empty", "none")); return box; }
    var ul = el("ul");
    items.slice(0, CHANGES_SHOWN).forEach(function (it) { add(ul, line(it)); });
    add(box, ul);
    var left = items.length - Math.min(items.length, CHANGES_SHOWN) + (more || 0);
    if (left > 0) { add(box, el("p", "more", "+" + fmt(left) + " more: see the diff's JSON (websim diff -o)")); }
    return box;
  }

  function li() {
    var e = el("li");
    for (var i = 0; i < arguments.length; i++) {
      var a = arguments[i];
      add(e, typeof a === "string" ? el("span", null, a) : a);
    }
    return e;
  }

  // A screenshot of the diff: only a thumbnail file of this folder (thumbs-old/ before, thumbs/ after).
  function shot(name, folder, note) {
    if (typeof name === "string" && /^[0-9a-f]{16}\.(webp|jpg)$/.test(name)) {
      var img = el("img", "shot");
      img.loading = "lazy";
      img.decoding = "async";
      img.width = 320;
      img.height = 200;
      img.alt = note + " screenshot";
      img.src = folder + "/" + name;
      return img;
    }
    return el("div", "shot nothumb", "no screenshot " + note);
  }

  function side(s, name, folder, note, url) {
    var f = el("figure", "tile side-" + note);
    add(f, shot(name, folder, note));
    var cap = el("figcaption");
    var head = el("div", "tile-h");
    add(head, el("span", "when", note), statusBadge(s.status), kindBadge(s.label || "content"));
    add(cap, head, el("div", "title", s.title || "(no title)"));
    if (s.final_url && s.final_url !== url) { add(cap, add(el("div", "final", "→ "), link(s.final_url, "url"))); }
    if (s.error) { add(cap, el("div", "err", s.error)); }
    if (s.excerpt) { add(cap, el("div", "excerpt", s.excerpt)); }
    if (s.cluster) { add(cap, el("div", "cid", s.cluster)); }
    add(f, cap);
    return f;
  }

  function changeCard(u) {
    var card = el("article", "change card");
    var head = el("div", "change-h");
    u.kinds.forEach(function (k) { add(head, el("span", "badge " + safeClass("c-", k), k)); });
    add(head, link(u.url, "url"));
    add(card, head, el("div", "what", u.what));
    var pair = el("div", "pair");
    add(pair, side(u.old, u.old_thumb, "thumbs-old", "before", u.url), side(u["new"], u.new_thumb, "thumbs", "after", u.url));
    add(card, pair);
    return card;
  }

  function kindChips(ch) {
    var bar = el("div", "chips");
    var total = ch.lists.urls_changed.length + (ch.more.urls_changed || 0);
    var kinds = [["", "all", total]].concat(Object.keys(ch.by_kind || {}).map(function (k) { return [k, k, ch.by_kind[k]]; }));
    kinds.forEach(function (kv) {
      var b = el("button", "chip" + (changeState.kind === kv[0] ? " on" : ""), kv[1] + " " + fmt(kv[2]));
      b.type = "button";
      b.setAttribute("data-kind", kv[0]);
      if (kv[0] && ch.kind_words && ch.kind_words[kv[0]]) { b.title = ch.kind_words[kv[0]]; }
      b.addEventListener("click", function () { changeState.kind = kv[0]; changeState.page = 0; renderChanges(); });
      add(bar, b);
    });
    return bar;
  }

  function renderChanges() {
    var ch = M.changes;
    var list = $("list");
    list.textContent = "";
    var box = el("div", "changes");
    add(box, el("p", "changes-h", "Changes from " + ch.old.path + " (" + fmt(ch.old.urls) + " URLs) to " +
      ch["new"].path + " (" + fmt(ch["new"].urls) + " URLs)"));
    (ch.notes || []).forEach(function (n) { add(box, el("p", "note", n)); });
    if (!ch.changed) { add(box, el("p", "empty", "No changes.")); add(list, box); return; }
    var L = ch.lists, more = ch.more;
    add(box, kindChips(ch));
    var shown = L.urls_changed.filter(function (u) { return !changeState.kind || u.kinds.indexOf(changeState.kind) >= 0; });
    var pages = Math.max(1, Math.ceil(shown.length / CHANGE_PAGE));
    if (changeState.page >= pages) { changeState.page = pages - 1; }
    $("matched").textContent = fmt(shown.length) + " changed URLs" + (changeState.kind ? " of kind " + changeState.kind : "") +
      ", each with its screenshot before and after";
    ["pager-top", "pager"].forEach(function (id) {
      pager($(id), changeState.page, pages, function (p) { changeState.page = p; renderChanges(); $("tabs").scrollIntoView({ block: "start" }); });
    });
    var cards = el("section", "changes-cards");
    shown.slice(changeState.page * CHANGE_PAGE, (changeState.page + 1) * CHANGE_PAGE).forEach(function (u) { add(cards, changeCard(u)); });
    add(box, cards);
    if (changeState.page === pages - 1) {
      add(box,
        changeList("URLs added to the list", L.urls_added, more.urls_added, function (u) { return li(el("span", "sign", "+"), link(u, "url")); }),
        changeList("URLs removed from the list", L.urls_removed, more.urls_removed, function (u) { return li(el("span", "sign", "−"), link(u, "url")); }),
        changeList("Collateral: unchanged pages whose cluster changed because a page of it did", L.collateral, more.collateral, function (x) {
          var e = li(link(x.url, "url"), el("span", "what", (x.old.cluster || "no cluster") + " → " + (x["new"].cluster || "no cluster")));
          var ul = el("ul", "urls");
          x.joined.slice(0, 5).forEach(function (u) { add(ul, li(el("span", "sign", "+"), link(u, "url"))); });
          x.left.slice(0, 5).forEach(function (u) { add(ul, li(el("span", "sign", "−"), link(u, "url"))); });
          add(e, ul);
          return e;
        }),
        changeList("Clusters that appeared with a changed page", L.appeared, more.appeared, function (c) {
          return li(el("span", "sign", "+"), el("span", "cid", c.cluster_id), " " + c.kind + ", " + fmt(c.size) + " pages, with ",
                    link(c.changed_urls[0], "url"));
        }),
        changeList("Clusters that vanished with a changed page", L.vanished, more.vanished, function (c) {
          return li(el("span", "sign", "−"), el("span", "cid", c.cluster_id), " " + c.kind + ", " + fmt(c.size) + " pages, with ",
                    link(c.changed_urls[0], "url"));
        }),
        changeList("Clusters a changed page joined or left", L.clusters_changed, more.clusters_changed, function (c) {
          var e = li(el("span", "sign", "~"), el("span", "cid", c.old_cluster + " = " + c.new_cluster),
                     " " + c.kind + ": " + fmt(c.old_size) + " → " + fmt(c.new_size) + " pages");
          var ul = el("ul", "urls");
          c.joined.slice(0, 20).forEach(function (u) { add(ul, li(el("span", "sign", "+"), link(u, "url"))); });
          c.left.slice(0, 20).forEach(function (u) { add(ul, li(el("span", "sign", "−"), link(u, "url"))); });
          add(e, ul);
          return e;
        }),
        changeList("Canonicals that changed because the canonical changed", L.canonicals, more.canonicals, function (c) {
          return li(el("span", "cid", c.new_cluster), " ", link(c.old_canonical, "url"), " → ", link(c.new_canonical, "url"));
        }));
    }
    add(list, box);
  }

  function render() {
    if (state.tab === "changes") {
      Array.prototype.forEach.call(document.querySelectorAll("#tabs button"), function (b) {
        var on = b.getAttribute("data-tab") === "changes";
        b.className = on ? "on" : "";
        b.setAttribute("aria-selected", on ? "true" : "false");
      });
      $("matched").textContent = "";
      $("pager-top").textContent = "";
      $("pager").textContent = "";
      renderChanges();
      return;
    }
    var v = compute();
    var pages = renderChrome(v);
    if (state.page >= pages) { state.page = pages - 1; }
    pending = false;
    var list = $("list");
    list.textContent = "";
    var size = PAGE[state.tab];
    var slice = v[state.tab].slice(state.page * size, (state.page + 1) * size);
    if (!slice.length) {
      pending = !allLoaded;
      add(list, el("p", "empty", allLoaded ? "Nothing to show." : "Loading…"));
    } else if (state.tab === "clusters") {
      slice.forEach(function (ci) { add(list, clusterCard(ci, v.matches[ci])); });
    } else {
      add(list, rowTable(slice, state.tab === "failed"));
    }
  }

  // ---- one cluster, side by side ------------------------------------------------------------

  function tile(pos, c, j) {
    var r = rows[pos];
    if (!r) { dialog.pending = true; }
    var d = el("figure", "tile" + (j === 0 ? " canonical" : ""));
    add(d, thumb(r, "shot", 320, 200));
    var cap = el("figcaption");
    if (r) {
      var line = el("div", "tile-h");
      add(line, statusBadge(r[STATUS]), el("span", "rule", j === 0 ? "canonical" : ruleName(M.rules[r[RULE]])),
          el("span", "id", "#" + r[ID]));
      add(cap, line, link(r[URL_], "url"), el("div", "title", r[TITLE] || "(no title)"));
      if (r[ERR]) { add(cap, el("div", "err", r[ERR])); }
      if (j > 0) { add(cap, sims(r)); }
      add(cap, reason(r));
      add(cap, extras(r));
    } else {
      add(cap, el("div", "title", "loading…"));
    }
    add(d, cap);
    return d;
  }

  function renderDialog() {
    var c = M.clusters[dialog.ci];
    var kind = M.kinds[c[C_KIND]];
    dialog.pending = false;
    $("dlg-title").textContent = c[C_ID] + " — " + kindName(kind) + ", " + fmt(c[C_SIZE]) + (c[C_SIZE] === 1 ? " page" : " pages");
    var sub = $("dlg-sub");
    sub.textContent = "";
    add(sub, originsLine(c), el("div", "legend", "similarities to the canonical: text · structure · visual · behaviour"));
    var grid = $("dlg-grid");
    grid.textContent = "";
    var pages = Math.max(1, Math.ceil(c[C_SIZE] / DIALOG_PAGE));
    var from = dialog.page * DIALOG_PAGE;
    for (var j = from; j < Math.min(c[C_SIZE], from + DIALOG_PAGE); j++) { add(grid, tile(memberPos(c, j), c, j)); }
    pager($("dlg-pager"), dialog.page, pages, function (p) { dialog.page = p; renderDialog(); grid.scrollTop = 0; });
  }

  function openCluster(ci) {
    dialog.ci = ci;
    dialog.page = 0;
    renderDialog();
    $("overlay").hidden = false;
    document.body.classList.add("modal");
    $("dlg-close").focus();
  }

  function closeDialog() {
    $("overlay").hidden = true;
    document.body.classList.remove("modal");
    dialog.ci = -1;
  }

  // ---- start --------------------------------------------------------------------------------

  function wire() {
    var timer = null;
    $("q").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(readFilters, 150); });
    $("f-host").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(readFilters, 250); });
    $("f-pivot").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(readFilters, 250); });
    ["f-kind", "f-rule", "f-status"].forEach(function (id) { $(id).addEventListener("change", readFilters); });
    $("clear").addEventListener("click", function () {
      ["q", "f-kind", "f-rule", "f-status", "f-host", "f-pivot"].forEach(function (id) { $(id).value = ""; });
      readFilters();
    });
    Array.prototype.forEach.call(document.querySelectorAll("#tabs button"), function (b) {
      b.addEventListener("click", function () { state.tab = b.getAttribute("data-tab"); state.page = 0; render(); });
    });
    $("dlg-close").addEventListener("click", closeDialog);
    $("overlay").addEventListener("click", function (e) { if (e.target === $("overlay")) { closeDialog(); } });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && dialog.ci >= 0) { closeDialog(); }
      if (e.key === "/" && document.activeElement.tagName !== "INPUT") { e.preventDefault(); $("q").focus(); }
    });
  }

  function start() {
    var arrived = window.WEBSIM_Q || [];
    for (var i = 0; i < arrived.length; i++) { receive(arrived[i]); }
    window.WEBSIM_Q = { push: function (p) { receive(p); if (M) { onData(p); } } };
    if (!M) {
      $("nodata").hidden = false;
      return;
    }
    renderHeader();
    renderSummary();
    if (M.changes) {
      var c = M.changes.counts;
      $("n-changes").textContent = fmt(c.urls_changed + c.urls_added + c.urls_removed);
      $("tab-changes").hidden = false;
    }
    renderFilterOptions();
    wire();
    showLoading();
    render();
    queue = [M.clusters_file].concat(M.chunks.slice(1).map(function (c) { return c[0]; }));
    // ready once the first view is painted; then the rest of the data, file by file
    requestAnimationFrame(function () {
      setTimeout(function () {
        window.WEBSIM_FIRST_VIEW_MS = performance.now();
        document.documentElement.setAttribute("data-ready", "1");
        setTimeout(loadNext, 50);  // a moment for input and images before the next parse
      }, 0);
    });
  }

  start();
})();
