"""Prefect flows and deployments (thin: they call the library).

    generate       safeforge.flows.generate.generate        one source's records -> checked task folders
    review-push    safeforge.flows.review.review_push       a run's checked tasks -> Label Studio
    review-pull    safeforge.flows.review.review_pull       review decisions -> the run's ledger
    publish        safeforge.flows.publish.publish          accepted tasks -> a release (and the Hub)

`python -m safeforge.flows.deployments` serves every deployment (see safeforge.flows.deployments);
`safeforge.flows.executors` chooses how a generation run's records are processed, for the flow and
the command line alike. Import the flows from their modules (a flow and its module share the name
`generate`); this package itself does not import Prefect, so that a caller can set the Prefect
environment first (safeforge.settings).
"""
