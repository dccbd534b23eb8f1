"""Every deployment of the Prefect application, served by one process: `python -m safeforge.flows.deployments`.

- `generate/<source>` for every registered source (`safeforge.sources.SOURCES`): flow `generate` on the
  source's default data, limited to the sample records the bundled replay responses script
  (`SourceSpec.demo_limit`; parameters override source, path, selection, model, ...);
- `review-push/checked`: flow `review-push`, a run's checked tasks to Label Studio;
- `review-pull/decisions`: flow `review-pull`, the review decisions back into the run's ledger;
- `publish/release`: flow `publish`, runs' accepted tasks and folders of tasks to a release (and the Hub).

With `--work-pool NAME` the same deployments are registered on a process work pool instead, for
`prefect worker start --pool NAME` to run.

`safeforge services start` starts this process after the Prefect server; it needs PREFECT_API_URL
(see `safeforge.settings`).
"""

from __future__ import annotations

from safeforge.sources.registry import SOURCES

# deployment name -> the parameters it runs with unless `prefect deployment run --param` says otherwise:
# every registered source, limited to the records of its sample that the replayed responses script
GENERATE_DEFAULTS: dict[str, dict] = {name: {"source": name, "limit": spec.demo_limit} for name, spec in SOURCES.items()}
OTHER_DEPLOYMENTS = {"review-push": "checked", "review-pull": "decisions", "publish": "release"}


def deployment_names() -> list[str]:
    """`flow/deployment` names of everything `serve_all` serves."""
    return [f"generate/{source}" for source in GENERATE_DEFAULTS] + [f"{flow_name}/{name}" for flow_name, name in OTHER_DEPLOYMENTS.items()]


def build_deployments() -> list:
    """The RunnerDeployments (flows referenced by module path, so runs import them afresh)."""
    from prefect import Flow
    from prefect.types.entrypoint import EntrypointType

    from safeforge.flows.generate import generate
    from safeforge.flows.publish import publish
    from safeforge.flows.review import review_pull, review_push

    entrypoint, tags = EntrypointType.MODULE_PATH, ["safeforge"]
    deployments = [
        generate.to_deployment(
            name=source,
            parameters=parameters,
            description=f"Generate tasks from the bundled {source} sample (override with --param path=... and the selection parameters).",
            entrypoint_type=entrypoint,
            tags=tags,
        )
        for source, parameters in GENERATE_DEFAULTS.items()
    ]
    flows: dict[str, Flow] = {"review-push": review_push, "review-pull": review_pull, "publish": publish}
    deployments += [
        flows[flow_name].to_deployment(name=name, entrypoint_type=entrypoint, tags=tags) for flow_name, name in OTHER_DEPLOYMENTS.items()
    ]
    return deployments


def serve_all() -> None:
    """Register and serve every deployment until interrupted (SIGTERM or Ctrl-C). A SIGTERM stops
    the runner inside its event loop: Prefect's own handler calls the runner's stop from there,
    which leaves its coroutine un-awaited (a warning at every `safeforge services stop`)."""
    import asyncio
    import contextlib
    import signal

    from prefect.runner import Runner

    runner = Runner(pause_on_shutdown=False)
    for deployment in build_deployments():
        runner.add_deployment(deployment)

    async def serve() -> None:
        serving = asyncio.create_task(runner.start())
        await asyncio.sleep(0)  # start() installs Prefect's handler first; this one replaces it
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, lambda: asyncio.ensure_future(runner.astop()))
        await serving

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


def deploy_to_work_pool(pool: str) -> None:
    """Register every deployment on work pool `pool` (type `process`): its workers run the flows,
    importing them from the Safeforge installed where they run."""
    from prefect import deploy

    deploy(*build_deployments(), work_pool_name=pool, build=False, push=False, print_next_steps_message=False)


def main(argv: list[str] | None = None) -> None:
    import argparse
    import os

    from safeforge.settings import Settings

    parser = argparse.ArgumentParser(prog="python -m safeforge.flows.deployments", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--work-pool",
        help="register the deployments on this (process) work pool instead of "
        "serving them; start workers with `prefect worker start --pool NAME`",
    )
    args = parser.parse_args(argv)
    os.environ.update(Settings.load().prefect_env())
    if args.work_pool:
        deploy_to_work_pool(args.work_pool)
        print(f"registered {len(deployment_names())} deployments on work pool {args.work_pool!r}: " + ", ".join(deployment_names()))
    else:
        serve_all()


if __name__ == "__main__":
    main()
