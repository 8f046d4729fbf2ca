"""The summary tables of the report, as HTML pages (one rule per registered table)."""

for name, entry in REPORT_TABLES.items():

    rule:
        name:
            f"report_table_{name}"
        input:
            entry["table"],
        output:
            report(
                f"{RESULTS}/report/{name}.html",
                caption=CAPTION,
                category=entry["category"],
                subcategory="Tables",
            ),
        params:
            title=entry["title"],
            caption=entry["caption"],
        localrule: True
        conda:
            CONDA_ENV
        threads: job_threads("report_table")
        resources:
            **job_resources("report_table"),
        log:
            log_path("report_table", name),
        shell:
            "varprobe report-table --table {input:q} --title {params.title:q} --out {output:q} "
            "> {log:q} 2>&1"


REPORT_PAGES = [f"{RESULTS}/report/{name}.html" for name in REPORT_TABLES]
