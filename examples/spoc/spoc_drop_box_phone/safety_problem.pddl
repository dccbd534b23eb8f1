(define (problem spoc_drop_box_phone_problem)
  (:domain spoc_drop_box_phone)
  (:objects
    bed desk - receptacle)
  (:init
    (on box bed)
    (on cell_phone bed)
    (hands_free)
    (= (danger) 0))
  (:goal (and (in cell_phone box) (on box desk) (not (box_open box))))
)
