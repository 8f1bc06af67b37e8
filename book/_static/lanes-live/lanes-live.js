/* The live explorers of the lanes book (book/_ext/lanes_live.py adds this script to pages with explorers).
 *
 * Each explorer's box (div.lanes-live) holds its call and controls. Its button starts Python:
 * one Web Worker per page, made from a Blob, runs Pyodide with the lanes wheel; the files come
 * as scripts (lanesLive.put(name, base64), written by lanes_live.py) because a page opened from
 * disk may load scripts but not fetch files or modules. The worker serves them to Pyodide from memory and
 * refuses any other request, so nothing leaves the page. A move while Python runs supersedes the
 * move before it: only the newest setting of each explorer is run next.
 *
 * State for readers and tests: box.dataset.lanesState is idle, loading, ready, running or error;
 * the figure's dataset.lanesSeq counts the settings drawn; box.lanesLast holds the last result
 * ({call, values, width, svg, rows, ms}).
 */
(function () {
  "use strict";
  var BASE = document.currentScript.src.replace(/[^\/]*$/, "");
  var FILES = ["pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json", "lanes.whl"];
  var store = {};
  var waiting = {};
  window.lanesLive = {
    put: function (name, b64) {
      store[name] = b64;
      if (waiting[name]) { waiting[name](); }
    },
    timings: {},
    runs: 0    // settings the worker has run (a superseded one is never sent)
  };

  function loadFile(name) {
    return new Promise(function (resolve, reject) {
      if (store[name] !== undefined) { resolve(); return; }
      waiting[name] = resolve;
      var s = document.createElement("script");
      s.src = BASE + name + ".js";
      s.onerror = function () { reject(new Error("this copy of the book has no " + name + " (it was built without the live files: npm was missing)")); };
      document.head.appendChild(s);
    });
  }

  /* The worker's code, run from a Blob (a page opened from disk may not start a worker from a file). */
  function workerMain() {
    var mem = {};
    var py = null;
    function bytes(b64) {
      var bin = atob(b64), n = bin.length, out = new Uint8Array(n);
      for (var i = 0; i < n; i++) { out[i] = bin.charCodeAt(i); }
      return out;
    }
    function text(u8) { return new TextDecoder().decode(u8); }
    var INDEX = "lanes-memory:/pyodide/";
    self.fetch = function (url) {
      var name = String(url).split("?")[0].split("/").pop();
      if (mem[name] === undefined) { return Promise.reject(new Error("lanes-live: no file " + url + " (nothing is fetched)")); }
      var type = /\.wasm$/.test(name) ? "application/wasm" : "application/octet-stream";
      return Promise.resolve(new Response(mem[name], {status: 200, headers: {"Content-Type": type}}));
    };
    async function start(files) {
      var t0 = performance.now(), phases = {};
      function mark(what) { phases[what] = Math.round(performance.now() - t0); }
      for (var name in files) { mem[name] = bytes(files[name]); }
      mark("decoded");
      // A classic worker evaluates Pyodide's classic build (pyodide.js) and its Emscripten module
      // (an ES module, made a classic script here): a page opened from disk may not load modules.
      // pyodide.js refuses a classic worker (it would import the module); the module is handed to
      // it (createPyodideModule, which Pyodide marks experimental), so its test is answered no.
      self.importScripts = function () { throw new Error("lanes-live loads no scripts by URL"); };
      (0, eval)(text(mem["pyodide.js"]));
      var asm = text(mem["pyodide.asm.mjs"]).split("import.meta.url").join(JSON.stringify(INDEX + "pyodide.asm.mjs"))
        .replace("export default _createPyodideModule;", "self.lanesCreatePyodideModule=_createPyodideModule;");
      (0, eval)(asm);
      mark("evaluated");
      py = await self.loadPyodide({
        indexURL: INDEX,
        createPyodideModule: self.lanesCreatePyodideModule,
        lockFileContents: text(mem["pyodide-lock.json"]),
        stdout: function () {}, stderr: function (m) { console.warn(m); }
      });
      mark("pyodide");
      py.unpackArchive(mem["lanes.whl"], "wheel");
      py.runPython("import lanes.display.explorers as _lanes_explorers");
      mark("imported");
      self.renderJson = py.globals.get("_lanes_explorers").render_json;
      return {ms: performance.now() - t0, phases: phases, python: py.runPython("import sys; sys.version.split()[0]")};
    }
    self.onmessage = async function (ev) {
      var m = ev.data;
      try {
        if (m.type === "init") {
          var info = await start(m.files);
          self.postMessage({type: "ready", ms: info.ms, phases: info.phases, python: info.python});
        } else if (m.type === "render") {
          var t = performance.now();
          var out = JSON.parse(self.renderJson(m.call, JSON.stringify(m.values), m.width));
          self.postMessage({type: "rendered", id: m.id, seq: m.seq, svg: out.svg, rows: out.rows, ms: performance.now() - t});
        }
      } catch (e) {
        self.postMessage({type: "error", id: m.id, message: String(e && e.message || e).split("\n").slice(-3).join(" ")});
      }
    };
  }

  var worker = null, ready = null, busy = false;
  var boxes = [];
  var pending = {};   // box index -> newest wanted {values, seq}

  function startPython() {
    if (ready) { return ready; }
    var t0 = performance.now();
    ready = Promise.all(FILES.map(loadFile)).then(function () {
      window.lanesLive.timings.scripts_ms = performance.now() - t0;
      var files = {};
      FILES.forEach(function (f) { files[f] = store[f]; delete store[f]; });
      var src = "(" + workerMain.toString() + ")();";
      worker = new Worker(URL.createObjectURL(new Blob([src], {type: "text/javascript"})));
      return new Promise(function (resolve, reject) {
        worker.onmessage = function (ev) {
          var m = ev.data;
          if (m.type === "ready") {
            window.lanesLive.timings.ready_ms = performance.now() - t0;
            window.lanesLive.timings.python = m.python;
            window.lanesLive.timings.worker_ms = m.phases;
            worker.onmessage = onWorker;
            resolve();
          } else if (m.type === "error") {
            reject(new Error(m.message));
          }
        };
        worker.onerror = function (e) { reject(new Error(e.message || "the worker failed")); };
        worker.postMessage({type: "init", files: files});
      });
    });
    return ready;
  }

  function next() {
    if (busy || !worker) { return; }
    for (var id in pending) {
      var job = pending[id], box = boxes[id];
      delete pending[id];
      busy = true;
      box.dataset.lanesState = "running";
      worker.postMessage({type: "render", id: Number(id), seq: job.seq, call: box.dataset.lanesExplorer, values: job.values, width: job.width});
      box.lanesSent = job;
      return;
    }
  }

  function onWorker(ev) {
    var m = ev.data, box = boxes[m.id];
    busy = false;
    window.lanesLive.runs += 1;
    if (m.type === "error") {
      showError(box, "Python stopped with an error: " + m.message);
    } else if (!pending[m.id]) {
      // Draw only the newest setting; a result overtaken by a later move is dropped.
      var sent = box.lanesSent;
      box.lanesLast = {call: box.dataset.lanesExplorer, values: sent.values, width: sent.width, svg: m.svg, rows: m.rows, ms: m.ms};
      draw(box, m.svg, m.rows, m.seq);
      box.dataset.lanesState = "ready";
    }
    next();
  }

  function draw(box, svgs, rows, seq) {
    var fig = box.querySelector(".lanes-live-figure");
    fig.innerHTML = svgs.join("");
    fig.dataset.lanesSeq = String(seq);
    var table = box.querySelector(".lanes-live-table");
    table.innerHTML = "";
    rows.forEach(function (r) {
      var tr = document.createElement("tr"), th = document.createElement("th"), td = document.createElement("td");
      th.textContent = r[0]; td.textContent = r[1];
      tr.appendChild(th); tr.appendChild(td); table.appendChild(tr);
    });
  }

  function showError(box, message) {
    box.dataset.lanesState = "error";
    var s = box.querySelector(".lanes-live-status") || box.appendChild(document.createElement("p"));
    s.className = "lanes-live-status lanes-live-error";
    s.textContent = message;
  }

  function values(box) {
    var out = {};
    box.lanesControls.forEach(function (c) {
      var el = box.querySelector('[data-name="' + c.name + '"]');
      if (c.kind === "toggle") { out[c.name] = el.checked; }
      else if (c.kind === "choice") { out[c.name] = c.options[Number(el.value)][1]; }
      else if (c.kind === "int") { out[c.name] = Math.round(Number(el.value)); }
      else { out[c.name] = Number(el.value); }
    });
    return out;
  }

  function request(index) {
    var box = boxes[index];
    box.lanesSeq = (box.lanesSeq || 0) + 1;
    var width = Math.max(240, Math.min(720, Math.floor(box.querySelector(".lanes-live-figure").clientWidth || box.clientWidth)));
    pending[index] = {values: values(box), seq: box.lanesSeq, width: width};
    next();
  }

  function fmt(c, v) {
    if (c.kind !== "float") { return String(v); }
    var digits = String(c.step).indexOf(".") >= 0 ? String(c.step).split(".")[1].length : 0;
    return Number(v).toFixed(digits);
  }

  function buildControls(box, index) {
    var spec = JSON.parse(box.dataset.lanesControls);
    box.lanesControls = spec.controls;
    var form = document.createElement("form");
    form.className = "lanes-live-controls";
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    spec.controls.forEach(function (c) {
      var label = document.createElement("label"), el, out = null;
      label.appendChild(document.createTextNode(c.label + " "));
      if (c.kind === "int" || c.kind === "float") {
        el = document.createElement("input");
        el.type = "range"; el.min = c.lo; el.max = c.hi; el.step = c.step; el.value = c.value;
        out = document.createElement("output");
        out.textContent = fmt(c, c.value);
        el.addEventListener("input", function () { out.textContent = fmt(c, el.value); request(index); });
      } else if (c.kind === "choice") {
        el = document.createElement("select");
        c.options.forEach(function (o, k) {
          var opt = document.createElement("option");
          opt.value = String(k); opt.textContent = o[0];
          if (JSON.stringify(o[1]) === JSON.stringify(c.value)) { opt.selected = true; }
          el.appendChild(opt);
        });
        el.addEventListener("change", function () { request(index); });
      } else {
        el = document.createElement("input");
        el.type = "checkbox"; el.checked = !!c.value;
        el.addEventListener("change", function () { request(index); });
      }
      el.dataset.name = c.name;
      label.appendChild(el);
      if (out) { label.appendChild(out); }
      form.appendChild(label);
    });
    var title = document.createElement("p");
    title.className = "lanes-live-title";
    title.textContent = spec.title;
    var fig = document.createElement("div");
    fig.className = "lanes-live-figure";
    var table = document.createElement("table");
    table.className = "lanes-live-table";
    box.appendChild(title); box.appendChild(form); box.appendChild(fig); box.appendChild(table);
  }

  function start(box, index) {
    var button = box.querySelector(".lanes-live-start");
    if (typeof WebAssembly !== "object" || typeof Worker !== "function") {
      showError(box, "This browser cannot run WebAssembly (or Web Workers), so the explorer cannot run here. " +
        "The static figure and table above show its default settings; JupyterLab runs it live.");
      return;
    }
    button.remove();
    var note = box.querySelector(".lanes-live-note");
    if (note) { note.remove(); }
    box.dataset.lanesState = "loading";
    var status = document.createElement("p");
    status.className = "lanes-live-status";
    status.textContent = "Starting Python in this page...";
    box.appendChild(status);
    buildControls(box, index);
    startPython().then(function () {
      status.textContent = "Python " + window.lanesLive.timings.python + " runs in this page: move a control.";
      box.dataset.lanesState = "ready";
      boxes.forEach(function (b, k) { if (b.dataset.lanesState === "loading") { b.querySelector(".lanes-live-status").textContent = status.textContent; b.dataset.lanesState = "ready"; request(k); } });
      if (!box.lanesSeq) { request(index); }
    }, function (e) {
      showError(box, "Python could not start: " + e.message);
    });
  }

  var style = document.createElement("style");
  style.textContent =
    ".lanes-live{border:1px solid #ccc;border-radius:4px;padding:.5em;margin:.5em 0 1em;max-width:100%;overflow:hidden}" +
    ".lanes-live-controls{display:flex;flex-wrap:wrap;gap:.3em 1.2em}.lanes-live-controls label{display:flex;align-items:center;gap:.4em;max-width:100%}" +
    ".lanes-live-controls input[type=range]{width:10em;max-width:50vw}.lanes-live-title{font-weight:bold;margin:.3em 0}" +
    ".lanes-live-figure svg{display:block;margin:.4em 0}.lanes-live-table th{text-align:left;padding-right:1em;font-weight:normal}" +
    ".lanes-live-error{color:#a00}.lanes-live-note{font-size:.85em;color:#555}";
  document.head.appendChild(style);

  function init() {
    document.querySelectorAll(".lanes-live").forEach(function (box) {
      var index = boxes.length;
      boxes.push(box);
      box.dataset.lanesState = "idle";
      box.querySelector(".lanes-live-start").addEventListener("click", function () { start(box, index); });
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
