"""The service's pages: the search page at ``/``, a document page at ``/view/{id}``, ``/docs``.

Everything a page loads comes from this machine: the page's HTML, JS and CSS are package data
(``graphtx/serve/static/``, in the wheel), and Swagger UI's files come from the
``swagger-ui-bundle-v2`` package (``graphtx[serve]``), mounted at ``/static/swagger-ui/`` (FastAPI's
self-hosting recipe: ``docs_url=None`` + ``get_swagger_ui_html`` with local URLs). ReDoc, which
only loads from a CDN, is off. The search page is sent with a Content-Security-Policy that allows
this origin only, so a page that tried to load anything else would be blocked by the browser.
Static files are only read, never written.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
PAGE = "index.html"
SWAGGER_PREFIX = "/static/swagger-ui"
# the search page: scripts, styles, images and requests from this origin only
PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"
# Swagger UI's page starts it with an inline script
DOCS_CSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'"


def swagger_dir() -> Path | None:
    """The Swagger UI files of the swagger-ui-bundle-v2 package, None when it is not installed."""
    try:
        import swagger_ui_bundle
    except ImportError:
        return None
    path = Path(str(swagger_ui_bundle.swagger_ui_path))
    return path if (path / "swagger-ui-bundle.js").is_file() else None


def add_pages(app) -> None:
    """Mount the static files and add ``/``, ``/view/{id}`` and ``/docs`` to ``app``."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles

    swagger = swagger_dir()
    if swagger is not None:  # mounted first: /static/swagger-ui/... is not looked up in STATIC_DIR
        app.mount(SWAGGER_PREFIX, StaticFiles(directory=swagger), name="swagger-ui")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    def page():
        return FileResponse(
            STATIC_DIR / PAGE,
            media_type="text/html",
            headers={"Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-cache"},
        )

    @app.get("/", include_in_schema=False)
    def search_page():
        return page()

    @app.get("/view/{doc_id:path}", include_in_schema=False)
    def document_page(doc_id: str):  # the page reads the id from its address and asks GET /documents/{id}
        return page()

    @app.get("/docs", include_in_schema=False)
    def docs():
        if swagger is None:
            return JSONResponse(
                {
                    "error": "the API page needs Swagger UI's files: pip install 'graphtx[serve]' (swagger-ui-bundle-v2); "
                    "the API description is at /openapi.json"
                },
                status_code=503,
            )
        html = get_swagger_ui_html(
            openapi_url=app.openapi_url,
            title="graphtx API",
            swagger_js_url=f"{SWAGGER_PREFIX}/swagger-ui-bundle.js",
            swagger_css_url=f"{SWAGGER_PREFIX}/swagger-ui.css",
            swagger_favicon_url=f"{SWAGGER_PREFIX}/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},  # no badge fetched from the Swagger validator's site
        )
        html.headers["Content-Security-Policy"] = DOCS_CSP
        return html
