(define (problem basic-problem)
  (:domain basic-domain)
  (:objects counter_top dining_table - receptacle)
  (:init
    (on tomato counter_top)
    (hands_free)
  )
  (:goal (and (hot tomato) (on tomato dining_table) (not (microwave_on microwave))))
)
