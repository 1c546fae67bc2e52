"""Building a committed pipeline from a ForwardingPipelineConfig (or a compiled program)."""

from __future__ import annotations

from collections.abc import Callable

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4sim import p4info as p4info_gen
from p4sim.model import CompiledProgram
from p4sim.p4info_compare import id_mismatches
from p4sim.p4runtime import device_config
from p4sim.p4runtime.errors import StatusError, invalid
from p4sim.p4runtime.index import PipelineIndex
from p4sim.switch import Pipeline

Compiler = Callable[[str, str], CompiledProgram]  # (preprocessed text, file name) -> program


def default_compiler(text: str, filename: str) -> CompiledProgram:
    from p4sim import frontend  # the language half; imported late so tests can run without it

    # a pushed program never reads the server's files (#include only core.p4, v1model.p4)
    return frontend.compile_source(text, filename, file_system=False)


def compile_errors() -> tuple[type[BaseException], ...]:
    """The exception types the front end raises for a bad program."""
    try:
        from p4sim.errors import P4Error
    except ImportError:  # front end not present yet
        return (SyntaxError,)
    return (P4Error,)


def from_program(
    program: CompiledProgram,
    config: bytes,
    cpu_port: int | None,
    client_p4info: p4info_pb2.P4Info | None = None,
    cookie: int | None = None,
) -> Pipeline:
    try:
        generated = p4info_gen.generate(program.model)
    except p4info_gen.P4InfoBuildError as exc:
        raise invalid(f"the program cannot be described in P4Info: {exc}") from None
    if client_p4info is not None and client_p4info.ByteSize():
        problems = id_mismatches(generated, client_p4info)
        if problems:
            raise invalid(
                "the P4Info does not describe the program in p4_device_config: "
                + "; ".join(problems[:5])
                + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
            )
        shown = client_p4info
    else:
        shown = generated
    return Pipeline(
        program=program,
        p4info=shown,
        device_config=config,
        device=program.new_device(cpu_port),
        cookie=cookie,
        index=PipelineIndex.build(program.model, generated),
    )


def from_config(
    config: p4runtime_pb2.ForwardingPipelineConfig, compiler: Compiler, cpu_port: int | None
) -> Pipeline:
    """Verify and instantiate `config`; INVALID_ARGUMENT with the reason when it is bad."""
    try:
        doc = device_config.decode(config.p4_device_config)
    except device_config.DeviceConfigError as exc:
        raise invalid(str(exc)) from None
    try:
        program = compiler(doc.program, doc.file)
    except compile_errors() as exc:
        raise invalid(str(exc)) from None
    except NotImplementedError as exc:
        raise StatusError(grpc.StatusCode.UNIMPLEMENTED, str(exc)) from None
    cookie = config.cookie.cookie if config.HasField("cookie") else None
    return from_program(program, config.p4_device_config, cpu_port, config.p4info, cookie)
