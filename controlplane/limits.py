"""The splitter program's sizes, as p4src declares them: what a controller or a scenario may
ask of the switch. Kept apart from the domain API so that the experiments can check a
scenario without importing the controller."""

MAX_USERS = 1024  # MAX_USERS in p4src/include/defines.p4
MAX_BATCH = 0xFFFF  # batch_size_t is bit<16>
MAX_PORT = 510  # bit<9>; 511 is v1model's drop port
