package openapi

import "html/template"

// The pages load their scripts from files, never inline, so that the
// Content-Security-Policy can forbid inline scripts. Every URL is relative
// to the page and stays on this server. Neither page links a web font: the
// ReDoc theme below uses the system's fonts (ReDoc's own examples pull theirs
// from a font CDN, which these pages must not do).

var swaggerPage = template.Must(template.New("swagger").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} - Swagger UI</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{{index .Assets "swagger-ui.css"}}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{{index .Assets "swagger-ui-bundle.js"}}"></script>
<script src="{{index .Assets "swagger-init.js"}}"></script>
</body>
</html>
`))

var redocPage = template.Must(template.New("redoc").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} - ReDoc</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<div id="redoc-container"></div>
<script src="{{index .Assets "redoc.standalone.js"}}"></script>
<script src="{{index .Assets "redoc-init.js"}}"></script>
</body>
</html>
`))

// swaggerInitJS starts Swagger UI on the document. validatorUrl is null:
// by default Swagger UI sends the document to an online validator.
const swaggerInitJS = `"use strict";
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    supportedSubmitMethods: ["get", "post"],
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
`

// redocInitJS starts ReDoc on the document with system fonts.
const redocInitJS = `"use strict";
(function () {
  var sans = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
  Redoc.init("openapi.json", {
    expandResponses: "200",
    theme: {
      typography: {
        fontFamily: sans,
        headings: { fontFamily: sans },
        code: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" }
      }
    }
  }, document.getElementById("redoc-container"));
})();
`
