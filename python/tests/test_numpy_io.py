# SPDX-License-Identifier: Apache-2.0
"""NumPy in and out: no copies where the memory allows, and every bad call is an exception
carrying the engine's message that leaves the function usable."""
import numpy as np
import pytest

import tensorscope as ts
import tensorscope.tensor as T

A = np.arange(6.0).reshape(2, 3)


@pytest.fixture(name="double")
def fixture_double():
    x = T.dmatrix("x")
    return ts.function([x], x * 2, name="double")


def test_contiguous_input_and_view_output_share_the_callers_memory():
    x = T.dmatrix("x")
    rows = ts.function([x], x[1:])
    result = rows(A)
    assert np.shares_memory(result, A)
    np.testing.assert_array_equal(result, A[1:])


def test_result_buffer_is_handed_over_and_writeable(double):
    result = double(A)
    assert result.flags.writeable
    assert result.base is not None  # kept alive by the engine's tensor, not copied
    result[0, 0] = 100.0
    np.testing.assert_array_equal(double(A), A * 2)


def test_writing_into_a_result_never_changes_a_constant():
    x = T.dvector("x")
    c = T.constant(np.arange(3.0))
    both = ts.function([x], [x + 1, c[1:]])
    _, view = both(np.zeros(3))
    if view.flags.writeable:
        view[0] = 99.0
    else:
        with pytest.raises(ValueError):
            view[0] = 99.0
    np.testing.assert_array_equal(both(np.zeros(3))[1], [1.0, 2.0])


def test_read_only_and_non_contiguous_inputs(double):
    read_only = A.copy()
    read_only.flags.writeable = False
    np.testing.assert_array_equal(double(read_only), A * 2)
    np.testing.assert_array_equal(double(np.asfortranarray(A)), A * 2)
    np.testing.assert_array_equal(double(A[:, ::2]), A[:, ::2] * 2)
    np.testing.assert_array_equal(read_only, A)  # inputs are never written


def test_python_values_are_converted_to_the_inputs_dtype():
    x = T.fvector("x")
    s = T.iscalar("s")
    f = ts.function([x, s], x * s)
    result = f([1, 2], 3)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, [3.0, 6.0])


def test_results_outlive_the_function():
    x = T.dvector("x")
    result = ts.function([x], x + 1)(np.zeros(4))
    np.testing.assert_array_equal(result, np.ones(4))


def expect_error(call, error_class, builtin, *fragments):
    with pytest.raises(error_class) as caught:
        call()
    assert isinstance(caught.value, ts.TensorscopeError)
    assert isinstance(caught.value, builtin)
    for fragment in fragments:
        assert fragment in str(caught.value)
    return caught.value


def test_wrong_number_of_inputs(double):
    expect_error(lambda: double(A, A), ts.InvalidArgumentError, ValueError,
                 "function 'double' takes 1 inputs, 2 given")
    expect_error(lambda: double(), ts.InvalidArgumentError, ValueError, "0 given")
    np.testing.assert_array_equal(double(A), A * 2)


def test_wrong_dtype(double):
    # Theano's allow_input_downcast=None: an array that could lose precision is refused, one that
    # cannot (float32 into float64) is cast.
    x = T.fmatrix("x")
    half = ts.function([x], x / 2, name="half")
    error = expect_error(lambda: half(A), ts.TypeMismatchError, TypeError,
                         "argument 0 of function 'half' (input 'x')", "float64 (2, 3)")
    assert error.kind == "TypeMismatch"
    np.testing.assert_array_equal(half(A.astype(np.float32)), A / 2)
    np.testing.assert_array_equal(double(A.astype(np.float32)), A * 2)


def test_wrong_rank_and_static_shape(double):
    expect_error(lambda: double(np.zeros(3)), ts.TypeMismatchError, TypeError, "input 0")
    v = T.tensor(dtype="float64", shape=(None, 3), name="v")
    f = ts.function([v], v + 1)
    expect_error(lambda: f(np.zeros((2, 4))), ts.ShapeMismatchError, ValueError, "input 0 ('v')")
    np.testing.assert_array_equal(f(np.zeros((2, 3))), np.ones((2, 3)))


def test_unsupported_dtype_and_unconvertible_values(double):
    expect_error(lambda: double(np.zeros((2, 2), dtype=np.complex128)), ts.TypeMismatchError,
                 TypeError, "complex128", "argument 0 of function 'double'")
    expect_error(lambda: double("abc"), ts.TypeMismatchError, TypeError, "type 'str'")
    expect_error(lambda: double(A.astype(">f8")), ts.TypeMismatchError, TypeError, "byte order")
    np.testing.assert_array_equal(double(A), A * 2)


def test_shape_error_at_call_time_names_the_node_and_the_users_line():
    x = T.dmatrix("x")
    y = T.dmatrix("y")
    product = T.dot(x, y)  # the line the error must name
    line = product.creation_site
    f = ts.function([x, y], product)
    expect_error(lambda: f(A, A), ts.ShapeMismatchError, ValueError, "inner dimensions differ",
                 f"created at {line}")
    np.testing.assert_array_equal(f(A, A.T), A @ A.T)


def test_update_whose_type_differs_from_its_shared_variable():
    x = T.dvector("x")
    w = ts.shared(np.zeros(3), "w")
    expect_error(lambda: ts.function([x], x.sum(), updates={w: T.fvector("v")}),
                 ts.TypeMismatchError, TypeError, "update of shared variable 'w'")
    expect_error(lambda: ts.function([x], x.sum(), updates={x: x + 1}),
                 ts.InvalidArgumentError, ValueError)


def test_givens_key_not_in_the_graph():
    x = T.dvector("x")
    stray = T.dvector("stray")
    expect_error(lambda: ts.function([x], x.sum(), givens={stray: x}), ts.InvalidArgumentError,
                 ValueError, "'stray' is not in the graph", "givens")
    expect_error(lambda: ts.function([x], x.sum(), givens={x: T.fvector("f")}),
                 ts.TypeMismatchError, TypeError, "givens")


def test_set_value_with_a_wrong_type():
    w = ts.shared(np.zeros(3), "w")
    expect_error(lambda: w.set_value(np.zeros((2, 2))), ts.TypeMismatchError, TypeError, "'w'")
    w.set_value([1, 2, 3])
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0, 3.0])


def test_building_errors_name_the_problem():
    x = T.dmatrix("x")
    expect_error(lambda: T.set_subtensor(x[None], 1.0), ts.UnsupportedError, NotImplementedError,
                 "newaxis")
    expect_error(lambda: x.dimshuffle("y", 0), ts.InvalidArgumentError, ValueError, "'x'")
    expect_error(lambda: T.dot(x, T.dtensor3()), ts.TypeMismatchError, TypeError)
    expect_error(lambda: T.set_subtensor(x, 1.0), ts.InvalidArgumentError, ValueError,
                 "indexed variable")
    expect_error(lambda: ts.function([x], x, mode="DebugMode"), ts.UnsupportedError,
                 NotImplementedError, "DebugMode")


def test_calls_from_several_threads():
    import threading
    x = T.dvector("x")
    f = ts.function([x], T.exp(x).sum())
    values = [np.full(1000, i / 1000.0) for i in range(8)]
    results = [None] * len(values)

    def work(index):
        for _ in range(50):
            results[index] = f(values[index])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(values))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for value, result in zip(values, results):
        np.testing.assert_allclose(result, np.exp(value).sum())
