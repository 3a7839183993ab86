import Foundation

extension HTMLReport {
    /// The chart wrapped for zooming: a `<div id="chart">` with the frame axis' geometry, the
    /// SVG, the visible range (`<span id="visible-range">FIRST-LAST</span>`) and a reset button.
    static func zoomableChart(_ chart: ReportChart) -> String {
        let f = { (v: Double) in String(format: "%.2f", v) }
        let targets =
            chart.longRun != nil
            ? "g.zoom rect, g.zoom polyline, g.zoom text"
            : "g.drops rect, polyline.intervals, g.markers circle, g.rate-switches line, g.rate-switches text, polyline.temperature, circle.reading"
        var h =
            "<div id=\"chart\" data-first-frame=\"\(chart.firstFrame)\" data-last-frame=\"\(chart.lastFrame)\" data-x=\"\(f(chart.timeline.x))\" data-width=\"\(f(chart.timeline.width))\""
        h += " data-targets=\"\(targets)\"\(chart.longRun == nil ? " data-frame-ticks=\"1\"" : "")>\n"
        h += SVGReport.svg(chart)
        h +=
            "<p class=\"zoom\">frames shown: <span id=\"visible-range\">\(chart.firstFrame)-\(chart.lastFrame)</span> <button id=\"zoom-reset\" type=\"button\">reset zoom</button> (mouse wheel over the timeline: zoom; drag: pan; <code>#zoom=FIRST-LAST</code> in the address: that range)</p>\n</div>\n"
        h += "<script>\n" + zoomScript + "</script>\n"
        return h
    }

    /// Zoom and pan over the frame axis, inline (no network): moves the marks of the elements
    /// named by the chart's `data-targets` to the visible frame range, hides those outside it
    /// (`visibility="hidden"`, `data-visible="0"`), redraws the frame ticks, writes the range into
    /// `#visible-range` and the chart's `data-visible-range`, the frames of the visible drop
    /// markers into `data-visible-markers`, and sets `data-zoom-ready="1"` when set up. A
    /// `#zoom=FIRST-LAST` fragment is applied at load.
    static let zoomScript = #"""
        (function () {
          var root = document.getElementById("chart");
          if (!root) return;
          var svg = root.querySelector("svg"), NS = "http://www.w3.org/2000/svg";
          var F0 = +root.getAttribute("data-first-frame"), F1 = +root.getAttribute("data-last-frame");
          var X = +root.getAttribute("data-x"), W = +root.getAttribute("data-width");
          var els = [].slice.call(svg.querySelectorAll(root.getAttribute("data-targets")));
          var ticks = root.getAttribute("data-frame-ticks") ? [].slice.call(svg.querySelectorAll('g.grid text[text-anchor="middle"]')) : [];
          var tickG = document.createElementNS(NS, "g");
          tickG.setAttribute("class", "zoom-ticks");
          svg.appendChild(tickG);
          var clip = document.createElementNS(NS, "clipPath");
          clip.setAttribute("id", "zoom-clip");
          var cr = document.createElementNS(NS, "rect");
          cr.setAttribute("x", X); cr.setAttribute("y", 0); cr.setAttribute("width", W); cr.setAttribute("height", svg.getAttribute("height"));
          clip.appendChild(cr);
          svg.appendChild(clip);
          var marks = els.map(function (e) {
            var t = e.tagName.toLowerCase(), o = { e: e, t: t, cls: e.getAttribute("class") || "" };
            if (t === "polyline") {
              o.p = e.getAttribute("points").trim().split(/\s+/).filter(Boolean).map(function (q) { var c = q.split(","); return [+c[0], c[1]]; });
              e.setAttribute("clip-path", "url(#zoom-clip)");
            } else if (t === "rect") {
              o.x = +e.getAttribute("x"); o.w = +e.getAttribute("width"); o.keep = o.cls === "stripe";
              if (!o.keep) e.setAttribute("clip-path", "url(#zoom-clip)");
            } else if (t === "circle") { o.x = +e.getAttribute("cx"); }
            else if (t === "line") { o.x = +e.getAttribute("x1"); o.x2 = +e.getAttribute("x2"); }
            else { o.x = +e.getAttribute("x"); }
            var fr = e.getAttribute("data-frame");
            if (fr === null && e.parentNode && e.parentNode.getAttribute) fr = e.parentNode.getAttribute("data-frame");
            o.f = fr === null || fr === "" ? null : +fr;
            o.n = +(e.getAttribute("data-frames") || 0);
            o.marker = /^(drop|worst)\b/.test(o.cls);
            return o;
          });
          var A = F0, B = F1;
          function map(x) { return X + ((x - X) / W * (F1 - F0) + F0 - A) / (B - A) * W; }
          function set(e, k, v) { e.setAttribute(k, typeof v === "number" ? v.toFixed(2) : v); }
          function show(o, on) { o.e.setAttribute("visibility", on ? "visible" : "hidden"); o.e.setAttribute("data-visible", on ? "1" : "0"); }
          function apply(a, b) {
            if (!(b > a)) { a = F0; b = F1; }
            var span = Math.min(F1 - F0, Math.max(4, b - a));
            a = Math.max(F0, Math.min(a, F1 - span));
            A = a; B = a + span;
            var visible = [];
            marks.forEach(function (o) {
              var e = o.e, on = true, nx;
              if (o.t === "polyline") {
                set(e, "points", o.p.map(function (c) { return map(c[0]).toFixed(2) + "," + c[1]; }).join(" "));
                return;
              }
              nx = map(o.x);
              if (o.t === "rect") {
                if (o.keep) { set(e, "x", map(o.x + o.w / 2) - o.w / 2); nx = map(o.x + o.w / 2); }
                else { var x2 = map(o.x + o.w); set(e, "x", nx); set(e, "width", Math.max(1, x2 - nx)); on = x2 >= X - 0.5 && nx <= X + W + 0.5; }
              } else if (o.t === "circle") { set(e, "cx", nx); }
              else if (o.t === "line") { set(e, "x1", nx); set(e, "x2", map(o.x2)); }
              else { set(e, "x", nx); }
              if (o.f !== null) on = o.n > 0 ? o.f + o.n > A && o.f <= B : o.f >= A && o.f <= B;
              else if (o.t !== "rect" || o.keep) on = nx >= X - 0.5 && nx <= X + W + 0.5;
              show(o, on);
              if (on && o.marker && o.f !== null && visible.indexOf(o.f) < 0) visible.push(o.f);
            });
            while (tickG.firstChild) tickG.removeChild(tickG.firstChild);
            var zoomed = A > F0 || B < F1;
            ticks.forEach(function (t) { t.setAttribute("visibility", zoomed ? "hidden" : "visible"); });
            if (zoomed && ticks.length) {
              var raw = (B - A) / 10, mag = Math.pow(10, Math.floor(Math.log10(raw))), step = 1;
              [1, 2, 5, 10].some(function (m) { step = m * mag; return step >= raw; });
              step = Math.max(1, Math.round(step));
              for (var f = Math.ceil(A / step) * step; f <= B; f += step) {
                var t = document.createElementNS(NS, "text");
                set(t, "x", X + (f - A) / (B - A) * W);
                t.setAttribute("y", ticks[0].getAttribute("y"));
                t.setAttribute("text-anchor", "middle");
                t.setAttribute("fill", ticks[0].getAttribute("fill") || "#404040");
                t.textContent = String(f);
                tickG.appendChild(t);
              }
            }
            var range = Math.round(A) + "-" + Math.round(B);
            document.getElementById("visible-range").textContent = range;
            root.setAttribute("data-visible-range", range);
            root.setAttribute("data-visible-markers", visible.sort(function (p, q) { return p - q; }).join(" "));
          }
          function svgX(ev) {
            var r = svg.getBoundingClientRect();
            return (ev.clientX - r.left) * (+svg.getAttribute("width")) / r.width;
          }
          svg.addEventListener("wheel", function (ev) {
            var x = svgX(ev);
            if (x < X || x > X + W) return;
            ev.preventDefault();
            var fc = A + (x - X) / W * (B - A), span = (B - A) * (ev.deltaY < 0 ? 0.8 : 1.25);
            apply(fc - (x - X) / W * span, fc - (x - X) / W * span + span);
          }, { passive: false });
          var drag = null;
          svg.addEventListener("mousedown", function (ev) {
            var x = svgX(ev);
            if (x >= X && x <= X + W) { drag = { x: x, a: A, b: B }; ev.preventDefault(); }
          });
          window.addEventListener("mousemove", function (ev) {
            if (!drag) return;
            var d = (svgX(ev) - drag.x) / W * (drag.b - drag.a);
            apply(drag.a - d, drag.b - d);
          });
          window.addEventListener("mouseup", function () { drag = null; });
          document.getElementById("zoom-reset").addEventListener("click", function () { apply(F0, F1); });
          function fromHash() {
            var m = /zoom=(-?[0-9.]+)-(-?[0-9.]+)/.exec(location.hash);
            if (m) apply(+m[1], +m[2]); else apply(F0, F1);
          }
          window.addEventListener("hashchange", fromHash);
          fromHash();
          root.setAttribute("data-zoom-ready", "1");
        })();

        """#
}
