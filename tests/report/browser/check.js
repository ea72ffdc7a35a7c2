// check.js - what tests/report/browser asks the report page through the
// DOM (issue 37), evaluated in the page by the DevTools protocol (not a
// script of the page: its Content-Security-Policy runs only its own).
// One object, geometry(svgSelector, labelsOnly), gives every drawn
// element of a picture that reaches outside it and every pair of visible
// labels that intersect. A label is a rotated rectangle: its corners are
// its getBBox() through getCTM(), in the svg's own pixels, and two are
// apart when some edge of one separates them (separating axes).
(function () {
  function corners(el) {
    var b = el.getBBox(), m = el.getCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]].map(function (p) {
      return [m.a * p[0] + m.c * p[1] + m.e, m.b * p[0] + m.d * p[1] + m.f];
    });
  }
  function project(cs, ax, ay) {
    var lo = Infinity, hi = -Infinity;
    cs.forEach(function (p) { var v = p[0] * ax + p[1] * ay; lo = Math.min(lo, v); hi = Math.max(hi, v); });
    return [lo, hi];
  }
  // Two convex quadrilaterals intersect (by more than eps pixels) unless
  // one of their 4 edge normals separates them.
  function intersect(a, b, eps) {
    var quads = [a, b];
    for (var q = 0; q < 2; q++) {
      for (var i = 0; i < 4; i++) {
        var p = quads[q][i], n = quads[q][(i + 1) % 4];
        var ax = -(n[1] - p[1]), ay = n[0] - p[0], len = Math.hypot(ax, ay);
        if (len === 0) continue;
        ax /= len; ay /= len;
        var pa = project(a, ax, ay), pb = project(b, ax, ay);
        if (pa[1] <= pb[0] + eps || pb[1] <= pa[0] + eps) return false;
      }
    }
    return true;
  }
  function visible(el) {
    var s = getComputedStyle(el);
    return s.display !== "none" && s.visibility !== "hidden" && +s.opacity > 0 && el.textContent.trim() !== "";
  }
  function describe(el) {
    var a = [el.tagName, el.getAttribute("class") || ""];
    ["data-node", "data-level", "data-group"].forEach(function (k) { if (el.hasAttribute(k)) a.push(k + "=" + el.getAttribute(k)); });
    if (el.tagName === "text") a.push(JSON.stringify(el.firstChild ? el.firstChild.nodeValue : ""));
    return a.join(" ");
  }
  return {
    geometry: function (sel, labelsOnly) {
      var svg = document.querySelector(sel);
      var W = svg.width.baseVal.value, H = svg.height.baseVal.value;
      var drawn = Array.prototype.filter.call(svg.querySelectorAll(labelsOnly ? "text" : "path, circle, rect, line, polyline, polygon, ellipse, text"),
        function (el) { return el.tagName !== "text" || visible(el); });
      var outside = [];
      drawn.forEach(function (el) {
        var cs = corners(el);
        if (cs.some(function (p) { return p[0] < -0.5 || p[1] < -0.5 || p[0] > W + 0.5 || p[1] > H + 0.5; })) {
          outside.push(describe(el) + " at " + cs.map(function (p) { return p[0].toFixed(1) + "," + p[1].toFixed(1); }).join(" "));
        }
      });
      var labels = drawn.filter(function (el) { return el.tagName === "text"; }).map(function (el) {
        var cs = corners(el);
        return { el: el, cs: cs, x0: Math.min.apply(null, cs.map(function (p) { return p[0]; })), x1: Math.max.apply(null, cs.map(function (p) { return p[0]; })),
          y0: Math.min.apply(null, cs.map(function (p) { return p[1]; })), y1: Math.max.apply(null, cs.map(function (p) { return p[1]; })) };
      });
      labels.sort(function (a, b) { return a.x0 - b.x0; });
      var overlaps = [];
      for (var i = 0; i < labels.length; i++) {
        for (var j = i + 1; j < labels.length && labels[j].x0 < labels[i].x1; j++) {
          var a = labels[i], b = labels[j];
          if (a.y1 <= b.y0 || b.y1 <= a.y0) continue;
          if (intersect(a.cs, b.cs, 0.25)) overlaps.push(describe(a.el) + " and " + describe(b.el));
        }
      }
      return { width: W, height: H, drawn: drawn.length, labels: labels.length, outside: outside, overlaps: overlaps };
    },
    // The groups of level (1 the outermost) with no label in the ring
    // view of the job whose ids start with prefix ("" a one-job page,
    // "a-" or "b-" a comparison: page.js's ids).
    unlabelledGroups: function (prefix, level) {
      var ring = document.getElementById(prefix + "ring"), missing = [];
      ring.querySelectorAll('path.arc[data-level="' + level + '"]').forEach(function (arc) {
        var g = arc.getAttribute("data-group");
        if (!ring.querySelector('text.gl[data-level="' + level + '"][data-group="' + g + '"]')) missing.push(g);
      });
      return missing;
    },
    // The nodes of group g of level (1 the outermost; the blob's numbering)
    // without a label in prefix's ring view.
    unlabelledNodes: function (prefix, level, g) {
      var ring = document.getElementById(prefix + "ring");
      var data = JSON.parse(document.getElementById(prefix + "data").textContent), missing = [];
      data.levels[level - 1].group.forEach(function (gm, m) {
        if (gm === g && !ring.querySelector('text.nl[data-node="' + m + '"]')) missing.push(m);
      });
      return missing;
    },
    // How many levels prefix's job has, and the groups of each.
    levels: function (prefix) {
      var data = JSON.parse(document.getElementById(prefix + "data").textContent);
      return data.levels.map(function (l) { return l.names.length; });
    },
  };
})()
