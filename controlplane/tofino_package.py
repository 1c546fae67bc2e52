"""The Tofino device config Stratum's `stratum_bfrt` takes in a P4Runtime push.

`ForwardingPipelineConfig.p4_device_config` for stratum_bfrt is a serialized
`stratum.hal.barefoot.BfPipelineConfig` (Stratum's public stratum/hal/lib/barefoot/bf.proto):
the program name, bfrt.json, and per profile the context.json, the chip binary and the pipes
it runs on. The message is built here from its schema with the protobuf descriptor API (three
fields deep, no generated code to keep in sync). `dcctl push --p4info P4INFO --config PACKAGE`
sends the package as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PROTO_PACKAGE = "stratum.hal.barefoot"
_BYTES = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
_STRING = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
_UINT32 = descriptor_pb2.FieldDescriptorProto.TYPE_UINT32
_MESSAGE = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
_OPTIONAL = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
_REPEATED = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED

# bf.proto's BfPipelineConfig: (name, number, type, label[, message type]).
_PROFILE_FIELDS = [
    ("profile_name", 1, _STRING, _OPTIONAL),
    ("context", 2, _BYTES, _OPTIONAL),
    ("binary", 3, _BYTES, _OPTIONAL),
    ("pipe_scope", 4, _UINT32, _REPEATED),
]
_CONFIG_FIELDS = [
    ("p4_name", 1, _STRING, _OPTIONAL),
    ("bfruntime_info", 2, _BYTES, _OPTIONAL),
    ("profiles", 3, _MESSAGE, _REPEATED, f".{_PROTO_PACKAGE}.BfPipelineConfig.Profile"),
]


def _message_class():
    file_proto = descriptor_pb2.FileDescriptorProto(
        name="dc_splitter/bf_pipeline_config.proto", package=_PROTO_PACKAGE, syntax="proto3"
    )
    config = file_proto.message_type.add(name="BfPipelineConfig")
    profile = config.nested_type.add(name="Profile")
    for message, fields in ((profile, _PROFILE_FIELDS), (config, _CONFIG_FIELDS)):
        for name, number, kind, label, *type_name in fields:
            field = message.field.add(name=name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name[0]
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{_PROTO_PACKAGE}.BfPipelineConfig")
    )


BfPipelineConfig = _message_class()


@dataclass(frozen=True)
class CompilerOutput:
    """The files p4c --target tofino/tofino2 writes into its output directory."""

    directory: Path
    chip: str  # "tofino" or "tofino2"
    profile_name: str = "pipe"  # the Pipeline instance's name in the program

    @property
    def bfrt(self) -> Path:
        return self.directory / "bfrt.json"

    @property
    def context(self) -> Path:
        return self.directory / self.profile_name / "context.json"

    @property
    def binary(self) -> Path:
        return self.directory / self.profile_name / f"{self.chip}.bin"


def build_package(output: CompilerOutput, p4_name: str, pipe_scope=(0, 1, 2, 3)) -> bytes:
    """The serialized BfPipelineConfig of one compile: one profile on `pipe_scope`."""
    for path in (output.bfrt, output.context, output.binary):
        if not path.is_file():
            raise FileNotFoundError(f"Tofino package: {path} missing (compile with p4c first)")
    config = BfPipelineConfig(p4_name=p4_name, bfruntime_info=output.bfrt.read_bytes())
    config.profiles.add(
        profile_name=output.profile_name,
        context=output.context.read_bytes(),
        binary=output.binary.read_bytes(),
        pipe_scope=list(pipe_scope),
    )
    return config.SerializeToString(deterministic=True)


def read_package(data: bytes):
    """A serialized BfPipelineConfig back as a message (to check or unpack a package)."""
    config = BfPipelineConfig()
    config.ParseFromString(data)
    return config
