# numpy/ beside this file must never be imported in place of NumPy
