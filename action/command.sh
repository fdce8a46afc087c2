#!/usr/bin/env bash
# The Action's plan, run and report steps. Inputs arrive as environment variables
# (never interpolated into this text); outputs go to $GITHUB_OUTPUT. Written for bash
# 3.2 too (macOS's /bin/bash).
#   plan    matrix        (written by `plan --format github` itself)
#   run     verdict, out, artifact (the folder uploaded, and its name: `<prefix>-<environment>`,
#           or a shard's `<prefix>-<environment>@<K>of<N>`)
#   report  verdict, report, conclusion, the counts, json, the URLs (written by `report`),
#           report-path
set -euo pipefail

manifest=()
[ -n "${VERIFY_MATRIX_MANIFEST:-}" ] && manifest=(--manifest "$VERIFY_MATRIX_MANIFEST")

case "$1" in
    plan)
        # `post: comment,check-run` marks the head commit pending before planning (so an
        # invalid manifest still leaves a check run for the report to complete). A mark
        # that cannot be published is a warning: the report job publishes the verdict.
        pending=
        IFS=, read -r -a targets <<<"${VERIFY_MATRIX_POST:-}"
        for target in ${targets[@]+"${targets[@]}"}; do
            target=${target// /}
            case "$target" in
                comment | check-run) pending="${pending:+$pending,}$target" ;;
            esac
        done
        if [ -n "$pending" ]; then
            cargo-verify-matrix ${manifest[@]+"${manifest[@]}"} publish --pending --to "$pending" --comment "${VERIFY_MATRIX_COMMENT:-always}" \
                || echo "::warning title=cargo verify-matrix::the pending mark was not published (exit $?); the report job still publishes the verdict"
        fi
        cargo-verify-matrix ${manifest[@]+"${manifest[@]}"} plan --format github
        ;;
    run)
        env=${VERIFY_MATRIX_ENVIRONMENT:-}
        [ -n "$env" ] || { echo "::error title=cargo verify-matrix::input \`environment\` is required for \`command: run\`"; exit 2; }
        # A shard (`K/N`) runs its slice; `/` is the plan's entry of an environment it
        # does not split (no `shard` in the matrix entry).
        shard=${VERIFY_MATRIX_INPUT_SHARD:-}
        [ "$shard" = / ] && shard=
        sharding=()
        stem=$env
        if [ -n "$shard" ]; then
            case "$shard" in
                *[!0-9/]* | /* | */ | */*/*)
                    echo "::error title=cargo verify-matrix::input \`shard\` must be K/N (shard K of N), not \`$shard\`"
                    exit 2
                    ;;
            esac
            sharding=(--shard "$shard")
            stem="$env@${shard%/*}of${shard#*/}"
        fi
        out="${RUNNER_TEMP:?}/verify-matrix-results/$stem"
        echo "out=$out" >>"$GITHUB_OUTPUT"
        echo "artifact=${VERIFY_MATRIX_ARTIFACT_PREFIX:-verify-matrix}-$stem" >>"$GITHUB_OUTPUT"
        cargo-verify-matrix ${manifest[@]+"${manifest[@]}"} run --env "$env" ${sharding[@]+"${sharding[@]}"} --jobs "${VERIFY_MATRIX_JOBS:-1}" --out "$out"
        ;;
    report)
        artifacts=${VERIFY_MATRIX_ARTIFACTS:?}
        report="${RUNNER_TEMP:?}/verify-matrix-report.json"
        echo "report-path=$report" >>"$GITHUB_OUTPUT"
        trust=()
        base=${VERIFY_MATRIX_BASE_MANIFEST:-}
        if [ -n "$base" ]; then
            if [ -f "$base" ]; then
                trust+=(--base-manifest "$base")
            else
                echo "::notice title=cargo verify-matrix::no base manifest at $base (a base branch without one?): the manifest is not compared"
            fi
        fi
        [ "${VERIFY_MATRIX_ALLOW_WEAKENING:-false}" = true ] && trust+=(--allow-weakening)
        [ "${VERIFY_MATRIX_CANCELLED:-false}" = true ] && trust+=(--cancelled)
        # `history: true`: a pull request's report (or the workflow_run recipe's) is
        # compared with the base branch's latest run, imported from its report artifacts.
        history=false
        [ "${VERIFY_MATRIX_HISTORY:-false}" = true ] && history=true
        db=.verify-matrix/history.sqlite
        # `history-keep`: RUNS or RUNS,DAYS (0 keeps everything), after each import;
        # empty: the manifest's `history:`, else 200 runs or 90 days.
        keep_spec=${VERIFY_MATRIX_HISTORY_KEEP:-}
        keep=()
        case "$keep_spec" in
            "") ;;
            *[!0-9,]* | ,* | *, | *,*,*)
                echo "::error title=cargo verify-matrix::history-keep \`$keep_spec\` is not RUNS or RUNS,DAYS (whole numbers; 0 keeps everything)"
                exit 2
                ;;
            *,*) keep=(--keep-runs "${keep_spec%%,*}" --keep-days "${keep_spec#*,}") ;;
            *) keep=(--keep-runs "$keep_spec") ;;
        esac
        if $history && { [ -n "${GITHUB_BASE_REF:-}" ] || [ "${GITHUB_EVENT_NAME:-}" = workflow_run ]; }; then
            base_ref=${GITHUB_BASE_REF:-}
            if cargo-verify-matrix ${manifest[@]+"${manifest[@]}"} history --history "$db" sync --from-github ${base_ref:+--branch "$base_ref"} \
                --runs "${VERIFY_MATRIX_HISTORY_RUNS:-10}" --artifact "${VERIFY_MATRIX_ARTIFACT_PREFIX:-verify-matrix}_report" ${keep[@]+"${keep[@]}"}; then
                :
            else
                echo "::warning title=cargo verify-matrix::the base branch's runs were not all imported (exit $?): compared with what the history holds"
            fi
            [ "${VERIFY_MATRIX_BASELINE:-auto}" = auto ] && trust+=(--baseline-from "history${base_ref:+:$base_ref}" --history "$db")
        fi
        # `files`: the workflow's own runner reports, instead of the legs' results, or
        # added to the manifest's checks when `manifest` names one.
        inputs=("$artifacts")
        if [ -n "${VERIFY_MATRIX_FILES:-}" ]; then
            if [ -n "${VERIFY_MATRIX_MANIFEST:-}" ]; then
                inputs=("$artifacts" --files "$VERIFY_MATRIX_FILES")
            else
                inputs=(--files "$VERIFY_MATRIX_FILES")
            fi
            expected=${VERIFY_MATRIX_ENVIRONMENTS:-}
            case "$(printf '%s' "$expected" | tr -d ' \t\r\n' | cut -c1)" in
                # JSON (`${{ toJSON(…) }}`, the plan's matrix): read as JSON.
                '[' | '{') expected=$(printf '%s' "$expected" | tr '\r\n' '  ') ;;
                # A list by commas or lines.
                *) expected=$(printf '%s' "$expected" | tr '\n' ',' | tr -d ' \r') ;;
            esac
            expected=${expected%,}
            [ -n "$expected" ] && inputs+=("--environments=$expected")
            [ -n "${VERIFY_MATRIX_ENVIRONMENTS_FROM_JOB:-}" ] && inputs+=("--environments-from-job=$VERIFY_MATRIX_ENVIRONMENTS_FROM_JOB")
            [ -n "${VERIFY_MATRIX_ENVIRONMENT:-}" ] && inputs+=(--environment "$VERIFY_MATRIX_ENVIRONMENT")
        fi
        status=0
        cargo-verify-matrix ${manifest[@]+"${manifest[@]}"} report --fail-on "${VERIFY_MATRIX_FAIL_ON:-not-verified}" --to "${VERIFY_MATRIX_POST:-summary}" --comment "${VERIFY_MATRIX_COMMENT:-always}" --strict-table "${VERIFY_MATRIX_STRICT_TABLE:-folded}" ${trust[@]+"${trust[@]}"} --out "$report" "${inputs[@]}" || status=$?
        # The workflow_run recipe reports another (a fork's) run: not this branch's own.
        if $history && [ -f "$report" ] && [ "${GITHUB_EVENT_NAME:-}" != workflow_run ]; then
            cargo-verify-matrix ${manifest[@]+"${manifest[@]}"} history --history "$db" add ${keep[@]+"${keep[@]}"} "$report" \
                || echo "::warning title=cargo verify-matrix::this run was not added to the history (exit $?)"
        fi
        exit "$status"
        ;;
    *)
        echo "::error title=cargo verify-matrix::unknown command \`$1\`"
        exit 2
        ;;
esac
